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
            PX, EXAT, PXAT, NX, XX), DEL, EXISTS, INCR, DECR, EXPIRE, PEXPIRE, TTL, PTTL, PING, ECHO, \
            DBSIZE, FLUSHALL and QUIT commands, one at a time or now and then a few pipelined in one \
            write, and every reply is checked against a model of the key space applied in the order \
            the server read the requests, on the virtual clock. With faults, the seed also \
            resets connections, partitions hosts for a while, runs the server out of descriptors \
            (its accept backlog fills), makes hosts refuse or ignore connects, makes name \
            resolutions late, unanswered or dead, and crashes the server or restarts it \
            gracefully (SIGTERM): either one loses the key space, which the model follows. The \
            same seed gives the same run and the same digest.

            The size of the run: --minutes M of virtual time, clients pacing their commands with a \
            seeded think time before each write (--think-time, 750 ms on average: about 1,000 \
            commands per client in 10 minutes, a write carrying 1.25 commands on average), or \
            --commands N per client, sent back to back; with both, whichever comes first. Neither: \
            --commands 100.
            """)

    @Option(help: "The seed every choice derives from.")
    var seed: UInt64 = 1

    @Option(help: "Client hosts.")
    var clients = 10

    @Option(help: "Commands each client sends (back to back unless --minutes is given).")
    var commands: Int?

    @Option(help: "Virtual minutes the clients send commands for, pacing them with a think time.")
    var minutes: Double?

    @Option(help: "Mean think time of paced clients (--minutes), in milliseconds.")
    var thinkTime = 750

    @Flag(inversion: .prefixedNo, help: "Whether the seed draws faults (every kind; see above).")
    var faults = true

    @Option(help: "Mean milliseconds of virtual time between two connection resets (other faults scale with it).")
    var faultInterval = 40

    @Option(
        help:
            "Mean milliseconds between two crashes of the server, and between two graceful restarts (default: 1000, or 30000 with --minutes)."
    )
    var restartInterval: Int?

    @Option(help: "Print the last this many entries of the network's trace.")
    var traceTail = 0

    func validate() throws {
        guard clients >= 1 else { throw ValidationError("--clients must be at least 1") }
        guard (commands ?? 0) >= 0 else { throw ValidationError("--commands must not be negative") }
        guard (minutes ?? 1) > 0 else { throw ValidationError("--minutes must be positive") }
        guard thinkTime >= 1 else { throw ValidationError("--think-time must be at least 1") }
        guard traceTail >= 0 else { throw ValidationError("--trace-tail must not be negative") }
        guard faultInterval >= 1 else { throw ValidationError("--fault-interval must be at least 1") }
        guard (restartInterval ?? 1) >= 1 else { throw ValidationError("--restart-interval must be at least 1") }
    }

    func run() throws {
        let configuration: KeyValueWorld.Configuration
        if let minutes {
            configuration = .init(
                seed: seed, clients: clients, duration: .milliseconds(Int64(minutes * 60_000)),
                commands: commands ?? .max, meanThinkTime: .milliseconds(thinkTime), faults: faults,
                faultInterval: .milliseconds(faultInterval), restartInterval: .milliseconds(restartInterval ?? 30_000),
                traceTail: traceTail)
        } else {
            configuration = .init(
                seed: seed, clients: clients, commands: commands ?? 100, faults: faults,
                faultInterval: .milliseconds(faultInterval), restartInterval: .milliseconds(restartInterval ?? 1000),
                traceTail: traceTail)
        }
        let outcome = KeyValueWorld(configuration).run()
        for line in outcome.trace { print(line) }
        var size = minutes.map { " --minutes \($0.formatted)" } ?? ""
        if let commands { size += " --commands \(commands)" } else if minutes == nil { size += " --commands 100" }
        if minutes != nil && thinkTime != 750 { size += " --think-time \(thinkTime)" }
        let flags =
            (faults ? "" : " --no-faults") + (faultInterval == 40 ? "" : " --fault-interval \(faultInterval)")
            + (restartInterval.map { " --restart-interval \($0)" } ?? "")
        print(
            "replay: swift run -c release --package-path Examples loopkv-sim --seed \(seed) --clients \(clients)\(size)\(flags)"
        )
        print(
            "checked=\(outcome.checked) lost=\(outcome.lost) server-restarts=\(outcome.serverRestarts) events=\(outcome.events) virtual=\(outcome.virtualTime)"
        )
        let verdict = outcome.failure.map { "model=FAILED at event \($0.event): \($0.message)" } ?? "model=ok"
        print("seed=\(seed) digest=\(outcome.digest) commands=\(outcome.commands) faults=\(outcome.faults) \(verdict)")
        if outcome.failure != nil { throw ExitCode.failure }
    }
}

extension Double {
    /// The number as typed: "10" rather than "10.0" for a whole number.
    fileprivate var formatted: String {
        rounded() == self && abs(self) < 1e15 ? String(Int64(self)) : String(self)
    }
}
