#if ServiceLifecycle
    import Testing
    import Tomorrowland

    @testable import TomorrowlandServiceLifecycle

    /// The loop service's phases, without loops.
    struct LoopServiceStateMachineTests {
        private func hook() -> GracefulShutdownHook {
            GracefulShutdownHook { _ in Promise<Void, NoError>(fulfilled: ()) }
        }

        @Test func aServiceStartsOnceAndRefusesToStartWhileRunningOrAfterFinishing() {
            var machine = LoopServiceStateMachine()
            var refusals: [EventLoopServiceError?] = [machine.start(), machine.start()]
            _ = machine.beginDrain()
            refusals.append(machine.start())
            machine.beginShutdown()
            refusals.append(machine.start())
            machine.finish()
            refusals.append(machine.start())
            #expect(refusals == [nil, .alreadyRunning, .alreadyRunning, .alreadyRunning, .alreadyFinished])
            #expect(machine.phase == .finished)
        }

        @Test func hooksRegisteredBeforeOrWhileRunningAreHandedToTheDrainOnce() {
            var machine = LoopServiceStateMachine()
            let beforeRun = machine.register(hook: hook())
            let refusal = machine.start()
            let whileRunning = machine.register(hook: hook())
            let (listeners, hooks) = machine.beginDrain()
            let whileDraining = machine.register(hook: hook())
            #expect(beforeRun && whileRunning && !whileDraining)
            #expect(refusal == nil)
            #expect(listeners.isEmpty)
            #expect(hooks.count == 2)
        }

        @Test func cancellationSkipsTheDrainAndEndsRegistration() {
            var machine = LoopServiceStateMachine()
            _ = machine.start()
            let whileRunning = machine.register(hook: hook())
            machine.beginShutdown()
            let phase = machine.phase
            let whileShuttingDown = machine.register(hook: hook())
            machine.finish()
            #expect(whileRunning && !whileShuttingDown)
            #expect(phase == .shuttingDown)
            #expect(machine.phase == .finished)
        }
    }
#endif
