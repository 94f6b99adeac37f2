import Tomorrowland

/// Renders a result as `value(…)`, `error(…)`, `cancelled`, or `pending` for `nil`.
///
/// Results of any value and error type (including `Swift.Error`, which is not `Equatable`)
/// then compare as text: `#expect(describe(child.result) == "error(boom)")`.
func describe<Value, Failure>(_ result: PromiseResult<Value, Failure>?) -> String {
    switch result {
    case .none: return "pending"
    case .value(let value)?: return "value(\(value))"
    case .error(let error)?: return "error(\(error))"
    case .cancelled?: return "cancelled"
    }
}

extension Promise.Resolver where Value == Int, Error == String {
    /// Ends the promise the way `outcome` says: fulfilled with 42, rejected with `"bad"`, or
    /// cancelled.
    func settle(_ outcome: Outcome) {
        switch outcome {
        case .value: fulfill(with: 42)
        case .error: reject(with: "bad")
        case .cancelled: cancel()
        }
    }
}

extension Promise.Resolver where Value == Int, Error == Swift.Error {
    /// Ends the promise the way `outcome` says: fulfilled with 42, rejected with
    /// `TestError.boom`, or cancelled.
    func settle(_ outcome: Outcome) {
        switch outcome {
        case .value: fulfill(with: 42)
        case .error: reject(with: TestError.boom)
        case .cancelled: cancel()
        }
    }
}
