import Foundation
import Testing
import Tomorrowland

/// `PromiseResult` (§1.3) with its conveniences and conformances, `NoError` (§1.6) and
/// `PromiseCallbackError` (§1.7).
@Suite("PromiseResult, NoError, PromiseCallbackError")
struct PromiseResultTests {
    typealias IntResult = PromiseResult<Int, String>

    @Test("value, error and isCancelled read each case")
    func accessors() {
        let value: IntResult = .value(1)
        let error: IntResult = .error("e")
        let cancelled: IntResult = .cancelled
        #expect(value.value == 1 && value.error == nil && !value.isCancelled)
        #expect(error.value == nil && error.error == "e" && !error.isCancelled)
        #expect(cancelled.value == nil && cancelled.error == nil && cancelled.isCancelled)
    }

    @Test("map and flatMap transform values only")
    func mapAndFlatMap() {
        let value: IntResult = .value(2)
        let error: IntResult = .error("e")
        #expect(value.map { $0 * 3 } == .value(6))
        #expect(error.map { $0 * 3 } == .error("e"))
        #expect(IntResult.cancelled.map { $0 * 3 } == .cancelled)
        #expect(value.flatMap { _ in IntResult.error("from value") } == .error("from value"))
        #expect(error.flatMap { IntResult.value($0) } == .error("e"))
        #expect(IntResult.cancelled.flatMap { IntResult.value($0) } == .cancelled)
    }

    @Test("mapError and flatMapError transform errors only")
    func mapErrorAndFlatMapError() {
        let value: IntResult = .value(2)
        let error: IntResult = .error("abc")
        #expect(error.mapError { $0.count } == PromiseResult<Int, Int>.error(3))
        #expect(value.mapError { $0.count } == PromiseResult<Int, Int>.value(2))
        #expect(IntResult.cancelled.mapError { $0.count } == PromiseResult<Int, Int>.cancelled)
        #expect(error.flatMapError { PromiseResult<Int, Int>.value($0.count) } == .value(3))
        #expect(value.flatMapError { PromiseResult<Int, Int>.error($0.count) } == .value(2))
    }

    @Test("the transforms rethrow")
    func transformsRethrow() {
        #expect(throws: TestError.thrown) { _ = try IntResult.value(1).map { _ -> Int in throw TestError.thrown } }
        #expect(throws: TestError.thrown) { _ = try IntResult.error("e").mapError { _ -> Int in throw TestError.thrown } }
        #expect(throws: TestError.thrown) { _ = try IntResult.value(1).flatMap { _ -> IntResult in throw TestError.thrown } }
        #expect(throws: TestError.thrown) { _ = try IntResult.error("e").flatMapError { _ -> PromiseResult<Int, Int> in throw TestError.thrown } }
    }

    @Test("equality compares case and payload")
    func equality() {
        #expect(IntResult.value(1) == .value(1))
        #expect(IntResult.value(1) != .value(2))
        #expect(IntResult.value(1) != .cancelled)
        #expect(IntResult.error("a") != .error("b"))
        #expect(IntResult.cancelled == .cancelled)
        #expect(PromiseResult<Int, Int>.value(1) != .error(1))
    }

    @Test("hashing is consistent with equality and tells cases apart")
    func hashing() {
        let results: Set<PromiseResult<Int, Int>> = [.value(1), .value(1), .error(1), .cancelled, .cancelled]
        #expect(results.count == 3)
        #expect(PromiseResult<Int, Int>.value(5).hashValue == PromiseResult<Int, Int>.value(5).hashValue)
    }

    @Test("init from Result maps success to value and failure to error")
    func initFromResult() {
        #expect(describe(PromiseResult(Result<Int, TestError>.success(1))) == "value(1)")
        #expect(describe(PromiseResult(Result<Int, TestError>.failure(.boom))) == "error(boom)")
    }

    // MARK: Codable

    static func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode(_ text: String) throws -> IntResult {
        try JSONDecoder().decode(IntResult.self, from: Data(text.utf8))
    }

    @Test("encoding always writes both keys, null for the absent one")
    func encodingFormat() throws {
        #expect(try Self.json(IntResult.value(1)) == #"{"error":null,"value":1}"#)
        #expect(try Self.json(IntResult.error("e")) == #"{"error":"e","value":null}"#)
        #expect(try Self.json(IntResult.cancelled) == #"{"error":null,"value":null}"#)
    }

    @Test("decoding reads value, then error, else cancelled")
    func decoding() throws {
        #expect(try Self.decode(#"{"value":1,"error":null}"#) == .value(1))
        #expect(try Self.decode(#"{"value":null,"error":"e"}"#) == .error("e"))
        #expect(try Self.decode(#"{"value":null,"error":null}"#) == .cancelled)
        #expect(try Self.decode(#"{"value":2,"error":"ignored"}"#) == .value(2))
    }

    @Test("decoding throws when a key it reads is absent")
    func decodingRequiresBothKeys() throws {
        // `value` is read first; when it holds a value, `error` is never looked at.
        #expect(try Self.decode(#"{"value":1}"#) == .value(1))
        #expect(throws: DecodingError.self) { try Self.decode(#"{"error":"e"}"#) }
        #expect(throws: DecodingError.self) { try Self.decode(#"{"value":null}"#) }
        #expect(throws: DecodingError.self) { try Self.decode(#"{}"#) }
    }

    @Test("round trips through JSON for every case")
    func roundTrip() throws {
        for result in [IntResult.value(3), .error("x"), .cancelled] {
            #expect(try Self.decode(Self.json(result)) == result)
        }
    }

    // MARK: NoError

    @Test("NoError makes PromiseResult Codable, Hashable and Equatable; decoding a NoError throws")
    func noError() throws {
        let result: PromiseResult<Int, NoError> = .value(4)
        #expect(try Self.json(result) == #"{"error":null,"value":4}"#)
        let decoded = try JSONDecoder().decode(PromiseResult<Int, NoError>.self, from: Data(#"{"value":4,"error":null}"#.utf8))
        #expect(decoded == result)
        #expect(Set([result, .cancelled]).count == 2)
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode(PromiseResult<Int, NoError>.self, from: Data(#"{"value":null,"error":"x"}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode([NoError].self, from: Data("[1]".utf8))
        }
    }

    // MARK: PromiseCallbackError

    @Test("PromiseCallbackError.apiMismatch has raw value 0 and is a Swift.Error")
    func callbackError() {
        #expect(PromiseCallbackError.apiMismatch.rawValue == 0)
        #expect(PromiseCallbackError(rawValue: 0) == .apiMismatch)
        let error: any Error = PromiseCallbackError.apiMismatch
        #expect(error is PromiseCallbackError)
    }
}
