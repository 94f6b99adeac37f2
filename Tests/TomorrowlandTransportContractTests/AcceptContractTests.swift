import Testing
import Tomorrowland
import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

/// Accepting without a free descriptor: on loopback sockets and on the simulated network alike.
///
/// Each case runs in a child process: on the kernel it lowers the process's descriptor limit,
/// which would starve tests running beside it.
@Suite("Transport contract: accepting")
struct AcceptContractTests {
    @Test func runningOutOfDescriptorsDefersTheAcceptOnTheKernel() async {
        await #expect(processExitsWith: .success) {
            exitWithVerdict(ofOutOfDescriptors: .kernel)
        }
    }

    @Test func runningOutOfDescriptorsDefersTheAcceptOnTheSimulation() async {
        await #expect(processExitsWith: .success) {
            exitWithVerdict(ofOutOfDescriptors: .simulation)
        }
    }
}

/// With no descriptor free on the server, a client's connect completes (the kernel finishes the
/// handshake into the backlog) but `accept` fails with `EMFILE`: the listener accepts nothing and
/// backs off; once a descriptor is free it accepts the waiting connection. Exits 0 when that is
/// what happened, 1 otherwise (after printing what was observed).
private func exitWithVerdict(ofOutOfDescriptors transport: Transport) -> Never {
    let world = TransportWorld(transport)
    var acceptedCount = 0
    var observed: [String] = []
    do {
        let listener = try world.listen { _ in acceptedCount += 1 }
        let attempt = world.connect(to: listener.localPort)
        world.withServerOutOfDescriptors {
            _ = world.run(until: attempt)
            observed.append(attempt.result?.value == nil ? outcome(attempt) : "connected")
            world.settle()
            observed.append("accepted \(acceptedCount) without a descriptor")
        }
        _ = world.run { acceptedCount > 0 }
        observed.append("accepted \(acceptedCount) once one was free")
    } catch {
        observed.append("\(error)")
    }
    let expected = ["connected", "accepted 0 without a descriptor", "accepted 1 once one was free"]
    if observed != expected { print("observed \(observed), expected \(expected)") }
    // `_exit`: AddressSanitizer's leak check at `exit` would run while the world is still alive.
    _exit(observed == expected ? 0 : 1)
}
