#if ServiceLifecycle
    import ServiceLifecycle
    import Testing
    import Tomorrowland
    import TomorrowlandLoop
    import TomorrowlandServiceLifecycle
    import TomorrowlandTestSupport

    /// The sample of the article "Running under swift-service-lifecycle" (and the README's), on an
    /// ephemeral port, without signals, with a client: it echoes, and a graceful shutdown closes
    /// the client's connection and ends `run()`.
    @Suite(.timeLimit(.minutes(1)))
    struct DocCServiceLifecycleExampleTests {
        @Test func theArticlesEchoServerEchoesThenClosesItsClientsAtGracefulShutdown() async throws {
            let group = EventLoopGroup(loopCount: 2)
            let service = EventLoopGroupService(group: group, gracePeriod: .seconds(10))

            let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: group.next()) { connection in
                connection.startReading { bytes in
                    connection.enqueue(bytes)  // echo; sent when the handler returns
                    return bytes.count
                }
            }
            service.addListener(listener)  // at shutdown: stop accepting, flush, close
            let stopping = Recorder<String>()
            service.onGracefulShutdown { _ in
                stopping.record("stopping")
                return Promise<Void, NoError>(fulfilled: ())  // or a promise of the work in flight
            }

            let serviceGroup = ServiceGroup(services: [service])
            let running = Task { try await serviceGroup.run() }

            let client = try #require(BlockingClient.connect(port: listener.localPort))
            let echoed = await onBlockingThread { client.sendAndReceive(Array("ping\n".utf8)) }
            #expect(echoed == Array("ping\n".utf8))
            await serviceGroup.triggerGracefulShutdown()
            try await running.value
            #expect(stopping.values == ["stopping"])
            #expect(await onBlockingThread { client.readToEnd() } == (0, true))
            #expect(group.loops.allSatisfy { $0.isShutdownComplete })
        }
    }
#endif
