import ProbeCore
import Testing
import TomorrowlandLoop

@Suite("ProbeStateTracker")
struct ProbeStateTrackerTests {
    let web = ProbeEndpoint(host: "10.0.0.1", port: 80)
    let cache = ProbeEndpoint(host: "::1", port: 6379)

    @Test func theFirstObservationOfEachEndpointIsATransition() {
        var tracker = ProbeStateTracker()
        let first = tracker.record(.up(latency: .microseconds(250)), for: web)
        #expect(first == ProbeTransition(endpoint: web, wasUp: nil, status: .up(latency: .microseconds(250))))
        #expect(first?.message == "10.0.0.1:80 is up (latency 0.25 ms)")
        let other = tracker.record(.down(.tcp(.connectFailed(errno: 111))), for: cache)
        #expect(other?.message == "[::1]:6379 is down: connect failed (ECONNREFUSED)")
        #expect(tracker.state(of: web) == true)
        #expect(tracker.state(of: cache) == false)
    }

    @Test func onlyChangesOfUpOrDownAreReported() {
        var tracker = ProbeStateTracker()
        _ = tracker.record(.up(latency: .milliseconds(1)), for: web)
        // A different latency is not a change of state.
        #expect(tracker.record(.up(latency: .milliseconds(9)), for: web) == nil)
        let down = tracker.record(.down(.timedOut), for: web)
        #expect(down?.message == "10.0.0.1:80 went down: timed out")
        #expect(tracker.record(.down(.tcp(.connectFailed(errno: 111))), for: web) == nil)
        let back = tracker.record(.up(latency: .milliseconds(1500)), for: web)
        #expect(back?.message == "10.0.0.1:80 is back up (latency 1.500 s)")
    }
}
