import Testing
import Tomorrowland
import TomorrowlandLoop

/// The echo example of the article "Reading and Writing on a Connection"
/// (TomorrowlandLoop.docc/ReadingAndWriting.md), verbatim, so that the article stays true.
@Suite("Reading and writing: an echo server and a client on one EventLoop")
struct ReadmeTCPExampleTests {
    @Test func echoServerAnswersTheClientsLine() throws {
        let loop = EventLoop()
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in
            connection.startReading { bytes in  // all buffered input, contiguous
                connection.enqueue(bytes)  // echo; sent when the handler returns
                return bytes.count  // consumed
            }
        }
        let reply = TCPConnection.connect(host: "127.0.0.1", port: listener.localPort, on: loop, timeout: .seconds(2))
            .flatMap(on: .loop(loop)) { client in
                client.write(Array("ping\n".utf8)).flatMap(on: .loop(loop)) { client.read(upTo: [10], maxBytes: 1024) }
            }
        let echoed = loop.run(until: reply)  // .value(the bytes of "ping\n")
        loop.shutdown()
        #expect(echoed.value == Array("ping\n".utf8))
    }
}
