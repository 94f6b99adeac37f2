import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

/// One simulated client of loopkv: connects from its host, sends its commands one at a time, or
/// now and then a few of them in one write (pipelined), the next only once every reply came (or
/// the connection was lost), and reconnects after a lost connection. Paced, it waits a seeded
/// think time before each write and stops at a deadline on the virtual clock.
///
/// A think time belongs to the client, not to a connection: one lost while the client thinks is
/// replaced meanwhile, and the write goes as soon as the think time is over and a connection is
/// there; past the deadline, the client stops then, connected or not. Were a think time started
/// anew on each connection, a client whose connections live shorter than its think times (a
/// server restarting every few hundred milliseconds) would almost never write, and, as it reads
/// its deadline when a write is due, never stop.
///
/// Which reply each command must get is decided by the ``KeyValueWorld``, which applies the
/// command to the model at the moment the server reads its last byte; the client compares what
/// it reads with that.
///
/// - Important: `@unchecked Sendable`: touched only on the simulation's one thread (its host's
///   loop callbacks and the world's driver, which run there).
final class SimulatedKeyValueClient: @unchecked Sendable {
    /// A command sent and not answered yet.
    struct Outstanding {
        let command: ModelCommand
        /// "address:port" of the connection it was sent on, as the server sees the client.
        let connectionKey: String
        /// The replies the model allows, once the server read the command.
        var expected: ModelExpectation?
    }

    let index: Int
    let host: SimulatedHost
    private unowned let world: KeyValueWorld
    private var random: SimulationRandom
    /// Commands not sent yet.
    private(set) var remaining: Int
    /// When a paced client stops sending (virtual time since the network was created).
    private let deadline: Duration?
    /// The mean think time before each command, in microseconds; 0 sends at once.
    private let meanThinkMicroseconds: Int64
    /// Whether a think time runs: the next write waits for its end.
    private var isThinking = false
    /// Whether the next write is due (its think time is over) and waits for a connection.
    private var isReadyToSend = false
    /// When the client connected or started connecting, thought, or sent last, and what that
    /// was: for the report of a run that stopped making progress.
    private var lastStep: (time: Duration, what: String) = (.zero, "created")
    private(set) var connection: TCPConnection?
    /// Commands sent and not answered yet, in the order they were sent.
    private(set) var outstanding: [Outstanding] = []
    private var inbox: [UInt8] = []
    private(set) var isDone = false

    init(
        index: Int, host: SimulatedHost, world: KeyValueWorld, random: SimulationRandom, commands: Int,
        deadline: Duration?, meanThinkTime: Duration
    ) {
        self.index = index
        self.host = host
        self.world = world
        self.random = random
        remaining = commands
        self.deadline = deadline
        let (seconds, attoseconds) = meanThinkTime.components
        meanThinkMicroseconds = max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
    }

    /// The key the server's reads of `connection` are reported under.
    private func key(of connection: TCPConnection) -> String {
        "\(host.address):\(connection.localPort)"
    }

    func connect() {
        let loop = host.loop
        note("connecting")
        TCPConnection.connect(host: "server", port: KeyValueWorld.port, on: loop, timeout: .milliseconds(500))
            .always(on: .loop(loop)) { [self] result in
                switch result {
                case .value(let connection): connected(connection)
                case .error, .cancelled: reconnectLater()
                }
            }
    }

    private func connected(_ connection: TCPConnection) {
        guard !world.isFinished, !isDone else {
            connection.close()
            return
        }
        self.connection = connection
        note("connected as \(key(of: connection))")
        inbox.removeAll()
        connection.startReading { [weak self, weak connection] bytes in
            guard let self, let connection else { return bytes.count }
            self.read(bytes, on: connection)
            return bytes.count
        }
        _ = connection.closed.then(on: .loop(host.loop)) { [self, weak connection] error in
            guard let connection, connection === self.connection else { return }
            disconnected(orderly: error == nil)
        }
        if isReadyToSend {
            send()
        } else if !isThinking {
            sendNext()
        }
    }

    /// Sends the next command, after a think time when paced.
    private func sendNext() {
        guard !world.isFinished, !isDone else { return }
        guard meanThinkMicroseconds > 0 else {
            send()
            return
        }
        // Uniform around the mean: 1 µs to twice the mean.
        let think = Duration.microseconds(Int64.random(in: 1...(2 * meanThinkMicroseconds), using: &random))
        isThinking = true
        note("thinking until \(host.loop.now + think)")
        _ = host.loop.schedule(after: think) { [self] in
            isThinking = false
            send()
        }
    }

    /// Sends the next write on the connection, or, without one, as soon as one is established;
    /// past the deadline or out of commands, finishes instead (connected or not).
    private func send() {
        guard !world.isFinished, !isDone else { return }
        guard remaining > 0, deadline.map({ host.loop.now < $0 }) ?? true else {
            finish()
            return
        }
        guard let connection else {
            isReadyToSend = true
            note("ready to send, waiting for a connection")
            return
        }
        isReadyToSend = false
        // One write in eight carries 2 to 4 commands (pipelining); QUIT only ever goes alone
        // (the server ignores what follows it).
        let batch =
            Int.random(in: 0..<8, using: &random) == 0 ? min(remaining, Int.random(in: 2...4, using: &random)) : 1
        let connectionKey = key(of: connection)
        var bytes: [UInt8] = []
        for _ in 0..<batch {
            remaining -= 1
            var command = ModelCommand.random(using: &random, unixMilliseconds: world.unixMilliseconds)
            if batch > 1 && command.closesConnection { command = .ping }
            let encoded = command.encoded
            bytes += encoded
            // A protocol error's reply is known now: the server may answer before it read all of
            // the request (it stops at the byte in error), so the world may never see it whole.
            let known: ModelExpectation? = command == .malformed ? .exactly(KeyspaceModel.malformedReply) : nil
            outstanding.append(Outstanding(command: command, connectionKey: connectionKey, expected: known))
            world.sending(command, length: encoded.count, from: self, on: connectionKey)
        }
        note("sent \(batch) on \(connectionKey)")
        _ = connection.write(bytes)
    }

    /// Done: closes the connection, if any, after what it has to send, and connects no more.
    private func finish() {
        isDone = true
        isReadyToSend = false
        note("done")
        if let connection {
            self.connection = nil
            connection.close(afterFlushing: true)
        }
        world.clientFinished()
    }

    private func note(_ what: String) {
        lastStep = (host.loop.now, what)
    }

    /// What the client waits for, for the report of a run that stopped making progress: its
    /// commands in flight and whether the server read them, or its state and its last step.
    var waitingFor: String {
        if !outstanding.isEmpty {
            let read = outstanding.count { $0.expected != nil }
            let on = connection.map { "on \(key(of: $0))" } ?? "with no connection"
            let replies = outstanding.count == 1 ? "1 reply" : "\(outstanding.count) replies"
            return "client\(index): waiting for \(replies) \(on), the server having read \(read) of the commands;"
                + " last step at \(lastStep.time): \(lastStep.what)"
        }
        let state: String
        if isThinking {
            state = "thinking"
        } else if isReadyToSend {
            state = "ready to send, no connection"
        } else {
            state = connection == nil ? "connecting" : "connected, nothing to send"
        }
        return "client\(index): \(state); last step at \(lastStep.time): \(lastStep.what)"
    }

    private func read(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
        guard connection === self.connection else { return }
        inbox.append(contentsOf: bytes)
        while !world.isFinished {
            let parsed: (ModelReply, Int)?
            do {
                parsed = try ModelReply.parse(inbox[...])
            } catch {
                world.fail("client \(index): \(error)")
                return
            }
            guard let (reply, length) = parsed else { return }
            inbox.removeFirst(length)
            received(reply)
        }
    }

    private func received(_ reply: ModelReply) {
        guard let outstanding = outstanding.first else {
            world.fail("client \(index): reply \(reply) with no command outstanding")
            return
        }
        guard let expected = outstanding.expected else {
            world.fail("client \(index): reply \(reply) to `\(outstanding.command)` before the server read it")
            return
        }
        guard expected.accepts(reply) else {
            world.fail("client \(index): `\(outstanding.command)` got \(reply), the model expected \(expected)")
            return
        }
        world.replied()
        self.outstanding.removeFirst()
        guard self.outstanding.isEmpty else { return }
        if outstanding.command.closesConnection, let connection {
            // The server closes after its reply: a new connection for the next command.
            self.connection = nil
            connection.close()
            reconnectLater()
            return
        }
        sendNext()
    }

    /// The world's verdict for the first outstanding command on `connectionKey` the server had
    /// not read yet, once it read it (the server handles a connection's requests in order).
    func serverRead(on connectionKey: String, expecting reply: ModelExpectation) {
        guard
            let position = outstanding.firstIndex(where: { $0.connectionKey == connectionKey && $0.expected == nil })
        else { return }
        outstanding[position].expected = reply
    }

    /// The connection closed (reset, or the server closed it): the outstanding command, if any,
    /// is given up (the model applied it if and only if the server read it).
    ///
    /// An orderly close by the server (an end of input, not a reset) comes only from its graceful
    /// stop, which answers every request it read before it closes: a command the server read and
    /// did not answer then is a failure.
    private func disconnected(orderly: Bool) {
        // A malformed request's reply is known before the server reads it (`expected` is set at
        // the send), so whether the server got to its error is unknown here: it is left out.
        if orderly, let unanswered = outstanding.first(where: { $0.expected != nil && $0.command != .malformed }) {
            world.fail(
                "client \(index): the server closed the connection without answering `\(unanswered.command)`, which it read"
            )
            return
        }
        connection = nil
        note("connection lost (\(orderly ? "closed by the server" : "reset"))")
        if !outstanding.isEmpty {
            world.lost(outstanding.count)
            outstanding = []
        }
        reconnectLater()
    }

    private func reconnectLater() {
        guard !world.isFinished, !isDone else { return }
        let delay = Duration.milliseconds(Int.random(in: 1...50, using: &random))
        _ = host.loop.schedule(after: delay) { [self] in connect() }
    }
}
