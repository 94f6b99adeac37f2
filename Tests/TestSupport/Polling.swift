#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The generous bound for anything that waits, in real time, for an effect on another thread.
///
/// Tests never sleep for ordering (a ``TestLoop`` does virtual time): they wait for an event and
/// fail if it does not come within this bound, which only a hung test ever reaches, so it can be
/// long enough for a loaded machine or a sanitizer build.
public let generousTimeout: Duration = .seconds(20)

/// Polls `condition` every millisecond, without blocking a thread, until it holds or `timeout`
/// passes; answers whether it held.
///
/// For effects with no callback to wait on (a deinit or a release on another thread).
public func eventually(
    timeout: Duration = generousTimeout, _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

/// Polls `condition` every millisecond, blocking the calling thread, until it holds or `timeout`
/// passes; answers whether it held.
///
/// The synchronous form of ``eventually(timeout:_:)``, for tests that drive a loop in the
/// condition itself (`loop.runUntilIdle(); return …`) or run outside Swift Concurrency.
public func waitUntil(timeout: Duration = generousTimeout, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(1_000)
    }
    return condition()
}
