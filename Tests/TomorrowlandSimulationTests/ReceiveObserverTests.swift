import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

@Suite struct ReceiveObserverTests {
    @Test func theObserverSeesEveryByteEachHostReadsAndLeavesTheDigestAlone() throws {
        let observed = SimulatedNetwork(seed: 11)
        let server = observed.addHost("server")
        let client = observed.addHost("client")
        var readByServer: [UInt8] = []
        var readByClient: [UInt8] = []
        var remotes: Set<String> = []
        observed.receiveObserver = { host, remote, bytes in
            if host === server {
                readByServer.append(contentsOf: bytes)
                remotes.insert(remote)
            } else {
                readByClient.append(contentsOf: bytes)
            }
        }
        let listener = try startEchoServer(on: server)
        let message = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let reply = echo(message, from: client)
        observed.runUntilIdle()
        listener.close()
        observed.runUntilIdle()
        #expect(reply.result?.value == message)
        #expect(readByServer == message)
        #expect(readByClient == message)
        // The server's reads name the client's end.
        #expect(remotes.count == 1)
        #expect(remotes.first?.hasPrefix(client.address + ":") == true)

        let (unobserved, _) = try runEchoWorld(seed: 11, clientCount: 1)
        let (observedAgain, _) = try runEchoWorld(seed: 11, clientCount: 1, observe: true)
        #expect(unobserved.digest == observedAgain.digest)
    }
}
