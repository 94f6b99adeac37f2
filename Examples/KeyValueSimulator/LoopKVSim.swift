import ArgumentParser
import KeyValueSimulation

/// `loopkv-sim`: loopkv's server and its clients on a simulated network, one seed.
@main
struct LoopKVSim: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loopkv-sim",
        abstract: "Runs loopkv's server and clients on a seeded simulated network and checks every reply.",
        discussion: """
            One server host runs loopkv's KeyValueServer; each client host sends random GET, SET (EX, \
            PX, NX, XX), DEL, EXISTS, INCR, DECR, EXPIRE, PEXPIRE, TTL, PTTL, PING and ECHO commands, \
            one at a time, and every reply is checked against a model of the key space applied in \
            the order the server read the requests, on the virtual clock. With faults, the seed \
            also resets connections and partitions clients from the server for a while. The same \
            seed gives the same run and the same digest.
            """)

    @Option(help: "The seed every choice derives from.")
    var seed: UInt64 = 1

    @Option(help: "Client hosts.")
    var clients = 10

    @Option(help: "Commands each client sends.")
    var commands = 100

    @Flag(inversion: .prefixedNo, help: "Whether the seed draws faults (connection resets, partitions).")
    var faults = true

    @Option(help: "Mean milliseconds of virtual time between two faults.")
    var faultInterval = 40

    @Option(help: "Print the last this many entries of the network's trace.")
    var traceTail = 0

    func validate() throws {
        guard clients >= 1 else { throw ValidationError("--clients must be at least 1") }
        guard commands >= 0 else { throw ValidationError("--commands must not be negative") }
        guard faultInterval >= 1 else { throw ValidationError("--fault-interval must be at least 1") }
    }

    func run() throws {
        let world = KeyValueWorld(
            .init(
                seed: seed, clients: clients, commands: commands, faults: faults,
                faultInterval: .milliseconds(faultInterval)))
        let outcome = world.run()
        for line in outcome.trace.suffix(traceTail) { print(line) }
        let flags = (faults ? "" : " --no-faults") + (faultInterval == 40 ? "" : " --fault-interval \(faultInterval)")
        print(
            "replay: swift run --package-path Examples loopkv-sim --seed \(seed) --clients \(clients) --commands \(commands)\(flags)"
        )
        print(
            "checked=\(outcome.checked) lost=\(outcome.lost) events=\(outcome.events) virtual=\(outcome.virtualTime)")
        let verdict = outcome.failure.map { "model=FAILED at event \($0.event): \($0.message)" } ?? "model=ok"
        print("seed=\(seed) digest=\(outcome.digest) commands=\(outcome.commands) faults=\(outcome.faults) \(verdict)")
        if outcome.failure != nil { throw ExitCode.failure }
    }
}
