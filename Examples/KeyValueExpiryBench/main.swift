// Measures the two ways loopkv could expire keys, with 1M keys of 1 s TTL on an EventLoop:
//   lazy:   SET key value PX 1000; expired keys vanish on access, and a 100 ms sweep timer
//           pops due keys from a deadline heap (what loopkv does);
//   timers: SET key value, plus one loop timer per key that deletes it when it fires.
// Prints the time to insert, the resident memory added, and the time until every key is gone.
// Run each variant in its own process, in release:
//   swift run -c release loopkv-expiry-bench lazy|timers [keys]
import Foundation
import KeyValueCore
import Tomorrowland
import TomorrowlandLoop

/// The store and the request plumbing. Not `Sendable`: the main thread hands it to the loop in a
/// `LoopBound` box, and everything runs inside the loop's work.
final class ExpiryBench {
    let loop: EventLoop
    let store = ShardedStore(clock: .monotonic)
    var parser = RESPParser(maxRequestBytes: 1 << 20)
    var replies = RESPReplyWriter()
    lazy var processor = CommandProcessor(store: store)

    init(loop: EventLoop) {
        self.loop = loop
    }

    func execute(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            guard case .command = parser.parse(raw) else { fatalError("bad request") }
            _ = processor.execute(parser, into: &replies)
        }
        replies.removeAll()
    }

    static func request(_ arguments: [String]) -> [UInt8] {
        var bytes = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            bytes += Array("$\(argument.utf8.count)\r\n".utf8) + Array(argument.utf8) + [13, 10]
        }
        return bytes
    }

    static func residentBytes() -> Int {
        let text = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    /// Inserts `keyCount` keys the `variant` way, then waits until all are gone, and prints the
    /// figures. `this` is this object's box, for the timers' `@Sendable` work. On the loop.
    func measure(variant: String, keyCount: Int, _ this: LoopBound<ExpiryBench>) -> Promise<Void, NoError> {
        // Requests are built before measuring, so only the store's and the timers' work is timed.
        let sets = (0..<keyCount).map { index in
            Self.request(["SET", "key:\(index)", "value"] + (variant == "lazy" ? ["PX", "1000"] : []))
        }
        let deletes = variant == "timers" ? (0..<keyCount).map { Self.request(["DEL", "key:\($0)"]) } : []
        let before = Self.residentBytes()
        let start = ContinuousClock.now
        let sweeper = ExpirySweeper(store: store, executor: loop)
        if variant == "lazy" {
            for bytes in sets { execute(bytes) }
            sweeper.start()
        } else {
            for (index, bytes) in sets.enumerated() {
                execute(bytes)
                let delete = deletes[index]
                _ = loop.schedule(after: .seconds(1)) { this.value.execute(delete) }
            }
        }
        let inserted = ContinuousClock.now - start
        let added = Self.residentBytes() - before
        let (done, resolver) = Promise<Void, NoError>.makeWithResolver()
        poll(resolver, this)
        return done.map(on: .loop(loop)) {
            sweeper.stop()
            let gone = ContinuousClock.now - start
            print(
                "\(variant): \(keyCount) keys, insert \(inserted / keyCount) per key, "
                    + "+\(added / keyCount) bytes per key resident, all gone after \(gone)")
        }
    }

    private func poll(_ resolver: Promise<Void, NoError>.Resolver, _ this: LoopBound<ExpiryBench>) {
        if store.count == 0 {
            resolver.fulfill(with: ())
        } else {
            _ = loop.schedule(after: .milliseconds(1)) { this.value.poll(resolver, this) }
        }
    }
}

extension ExpiryBench {
    /// ns per request to parse, execute and encode batches of 16 pipelined requests (what
    /// redis-benchmark -P 16 sends), without sockets: the daemon's own share of a request.
    func measureRequests() {
        let batches: [(String, [UInt8])] = [
            ("PING_INLINE", Array(String(repeating: "PING\r\n", count: 16).utf8)),
            ("PING_MBULK", Array(repeating: Self.request(["PING"]), count: 16).flatMap { $0 }),
            ("SET", Array(repeating: Self.request(["SET", "key:__rand_int__", "xxx"]), count: 16).flatMap { $0 }),
            ("GET", Array(repeating: Self.request(["GET", "key:__rand_int__"]), count: 16).flatMap { $0 }),
        ]
        for (name, batch) in batches {
            let rounds = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 100_000 : 100_000
            let start = ContinuousClock.now
            for _ in 0..<rounds {
                batch.withUnsafeBytes { raw in
                    _ = processor.executeAll(raw, parser: &parser, into: &replies)
                }
                replies.removeAll()
            }
            let elapsed = ContinuousClock.now - start
            print("\(name): \(elapsed / (rounds * 16)) per request")
        }
    }
}

let arguments = CommandLine.arguments
let loop = EventLoop()
let bench = LoopBound(ExpiryBench(loop: loop), on: loop)
if arguments.count > 1 && arguments[1] == "requests" {
    let measured: Promise<Void, NoError> = loop.submit { bench.value.measureRequests() }
    _ = loop.run(until: measured)
} else {
    let variant = arguments.count > 1 ? arguments[1] : "lazy"
    let keyCount = arguments.count > 2 ? Int(arguments[2]) ?? 1_000_000 : 1_000_000
    let measured = loop.submit { bench.value.measure(variant: variant, keyCount: keyCount, bench) }
        .flatMap(on: .immediate) { $0 }
    _ = loop.run(until: measured)
}
loop.shutdown()
