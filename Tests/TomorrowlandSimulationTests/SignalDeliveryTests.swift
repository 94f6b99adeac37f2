import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

#if canImport(Glibc)
    import Glibc
#endif

/// `SimulatedNetwork.signal(_:to:at:)`: a simulated host's signal watchers hear the signals the
/// network sends, at the instant chosen, as a real loop's hear `kill(2)`.
@Suite struct SignalDeliveryTests {
    @Test func terminationSignalsHearTheSignalAtTheInstantChosen() throws {
        let network = SimulatedNetwork(seed: 1)
        let server = network.addHost("server")
        let heard = SimulatedBox<(signal: Int32, at: Duration)?>(nil)
        TerminationSignals.first(on: server.loop).tap(on: .immediate) { result in
            if case .value(let signal) = result { heard.value = (signal, network.now) }
        }
        network.signal(SIGTERM, to: server, at: .milliseconds(250))
        network.run(for: .seconds(1))
        #expect(heard.value?.signal == SIGTERM)
        #expect(heard.value?.at == .milliseconds(250))
        let line = try #require(network.trace.first { $0.kind == .action })
        #expect(line.detail == "signal SIGTERM to server")
        #expect(line.time == .milliseconds(250))
        #expect(!server.isCrashed)
    }

    @Test func aSecondSignalWhileTheWatchersRemainDoesNothing() {
        let network = SimulatedNetwork(seed: 2)
        let server = network.addHost("server")
        let count = SimulatedBox(0)
        let first = TerminationSignals.first(on: server.loop)
        first.tap(on: .immediate) { _ in count.value += 1 }
        network.signal(SIGINT, to: server, at: .milliseconds(10))
        network.signal(SIGTERM, to: server, at: .milliseconds(20))
        network.run(for: .seconds(1))
        #expect(first.result == .value(SIGINT))
        #expect(count.value == 1)
        #expect(!server.isCrashed)
    }

    @Test func aWatcherIsCalledForEachDelivery() throws {
        let network = SimulatedNetwork(seed: 3)
        let server = network.addHost("server")
        let heard = SimulatedBox<[Duration]>([])
        try server.loop.watch(signal: SIGHUP) { _ in heard.value.append(network.now) }
        for instant in [5, 6, 40] { network.signal(SIGHUP, to: server, at: .milliseconds(instant)) }
        network.run(for: .seconds(1))
        #expect(heard.value == [.milliseconds(5), .milliseconds(6), .milliseconds(40)])
    }

    @Test func aSignalRunsBeforeTheLoopWorkDueAtTheSameInstant() {
        let network = SimulatedNetwork(seed: 4)
        let server = network.addHost("server")
        let order = SimulatedBox<[String]>([])
        _ = server.loop.schedule(after: .milliseconds(30)) { order.value.append("timer") }
        _ = server.loop.signal(SIGUSR1).tap(on: .immediate) { _ in order.value.append("signal") }
        network.signal(SIGUSR1, to: server, at: .milliseconds(30))
        network.run(for: .seconds(1))
        #expect(order.value == ["signal", "timer"])
    }

    @Test func aOneShotWatchHearsOneSignalThenTheDefaultActionApplies() {
        let network = SimulatedNetwork(seed: 5)
        let server = network.addHost("server")
        let crashes = SimulatedBox<[String]>([])
        network.onHostCrash = { crashes.value.append($0.name) }
        let once = server.loop.signal(SIGINT)
        network.signal(SIGINT, to: server, at: .milliseconds(10))
        network.run(for: .milliseconds(15))
        #expect(once.result == .value(SIGINT))
        #expect(!server.isCrashed)
        // No watcher is left: the next SIGINT ends the process, as its default action does.
        network.signal(SIGINT, to: server, at: .milliseconds(20))
        network.run(for: .seconds(1))
        #expect(server.isCrashed)
        #expect(crashes.value == ["server"])
    }

    @Test func anUnwatchedSignalEndsTheProcessUnlessItIsIgnoredByDefault() {
        let network = SimulatedNetwork(seed: 6)
        let server = network.addHost("server")
        let crashes = SimulatedBox(0)
        network.onHostCrash = { _ in crashes.value += 1 }
        network.signal(SIGCHLD, to: server, at: .milliseconds(10))
        network.signal(SIGWINCH, to: server, at: .milliseconds(10))
        network.run(for: .milliseconds(50))
        #expect(!server.isCrashed)
        network.signal(SIGTERM, to: server, at: .milliseconds(60))
        network.run(for: .seconds(1))
        #expect(server.isCrashed)
        #expect(crashes.value == 1)
        #expect(network.trace.contains { $0.kind == .fault && $0.detail == "crash server" })
    }

    @Test func aCrashedHostReceivesNothingAndARestartedOneStartsWithoutWatchers() throws {
        let network = SimulatedNetwork(seed: 7)
        let server = network.addHost("server")
        let heard = SimulatedBox(0)
        try server.loop.watch(signal: SIGTERM) { _ in heard.value += 1 }
        network.schedule(at: .milliseconds(10), named: "crash") { network.crash(server) }
        network.signal(SIGTERM, to: server, at: .milliseconds(20))
        network.run(for: .milliseconds(30))
        #expect(heard.value == 0)
        network.restart(server)
        // The new process watches nothing yet: SIGTERM ends it.
        network.signal(SIGTERM, to: server, at: .milliseconds(40))
        network.run(for: .seconds(1))
        #expect(heard.value == 0)
        #expect(server.isCrashed)
    }

    @Test func oneLoopOfAHostOwnsItsSignalsAndOtherHostsHaveTheirOwn() throws {
        let network = SimulatedNetwork(seed: 8)
        let server = network.addHost("server", loopCount: 2)
        let other = network.addHost("other")
        let owned = try server.loops[0].watch(signal: SIGTERM) { _ in }
        #expect(throws: EventLoopError.signalsOwnedByAnotherLoop) {
            try server.loops[1].watch(signal: SIGINT) { _ in }
        }
        // Another host is another process.
        try other.loop.watch(signal: SIGTERM) { _ in }
        // The owner watches nothing any more: another loop of the host may watch.
        owned.cancel()
        network.run(for: .milliseconds(1))
        let heard = SimulatedBox<Int32?>(nil)
        try server.loops[1].watch(signal: SIGINT) { heard.value = $0 }
        network.signal(SIGINT, to: server, at: .milliseconds(5))
        network.run(for: .seconds(1))
        #expect(heard.value == SIGINT)
    }

    @Test func aCancelledDeliveryOrWatchLeavesTheHostAlone() {
        let network = SimulatedNetwork(seed: 9)
        let server = network.addHost("server")
        let delivery = network.signal(SIGTERM, to: server, at: .milliseconds(10))
        delivery.cancel()
        network.run(for: .milliseconds(50))
        #expect(!server.isCrashed)
        #expect(!network.trace.contains { $0.kind == .action })

        // A watch cancelled before the signal comes: the default action applies.
        let first = TerminationSignals.first(on: server.loop)
        first.requestCancel()
        network.signal(SIGTERM, to: server, at: .milliseconds(60))
        network.run(for: .seconds(1))
        #expect(first.result == .cancelled)
        #expect(server.isCrashed)
    }

    @Test func theSameSeedDeliversTheSameWay() throws {
        func run() throws -> UInt64 {
            let network = SimulatedNetwork(seed: 10)
            let server = network.addHost("server")
            let client = network.addHost("client")
            let listener = try startEchoServer(on: server)
            TerminationSignals.first(on: server.loop).tap(on: .loop(server.loop)) { _ in
                _ = listener.shutdownGracefully(within: .milliseconds(100))
            }
            let echoed = echo(Array("hello".utf8), from: client)
            network.signal(SIGTERM, to: server, at: .milliseconds(3))
            network.run(for: .seconds(1))
            #expect(echoed.result != nil)
            return network.digest
        }
        #expect(try run() == run())
    }
}
