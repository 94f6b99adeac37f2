import CLibevent
import CTomorrowlandLoopSupport
import CTomorrowlandSupport
import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

// On Linux, `DispatchQueue.main` drains only while the main thread runs `dispatchMain()` or a
// Foundation run loop. A daemon whose main thread runs an EventLoop instead must drain it too, or
// `.main` promise callbacks never run. libdispatch exports the two hooks CoreFoundation's run loop
// uses for this (a descriptor to watch, and a drain function); the loop's backend watches the
// descriptor while a drive runs on the main thread, and drains the queue from the event's callback.
extension LibeventBackend {
    /// Adds the main-queue event for the length of a drive, when the drive runs on the main
    /// thread. The drain function crashes on any other thread, so the event is never left added
    /// while another thread drives the loop.
    func attachMainQueueIfOnMainThread() {
        guard twl_is_main_thread() else { return }
        if mainQueueEvent == nil {
            let descriptor = twl_loop_main_queue_descriptor()
            guard descriptor >= 0 else { return }
            // Context: `self`, unretained; the event is freed at the loop's shutdown or release,
            // before this backend goes. LoopInvariants: "Unretained callback arguments".
            mainQueueEvent = event_new(
                base, descriptor, Int16(EV_READ | EV_PERSIST),
                { descriptor, _, context in
                    Unmanaged<LibeventBackend>.fromOpaque(context!).takeUnretainedValue().mainQueueFired(descriptor)
                }, Unmanaged.passUnretained(self).toOpaque())
        }
        guard let mainQueueEvent else { return }
        event_add(mainQueueEvent, nil)
        // Blocks queued before libdispatch created the descriptor never signalled it: drain once
        // in the first poll regardless.
        event_active(mainQueueEvent, EV_READ, 0)
    }

    /// Removes the main-queue event at the end of a drive on the main thread.
    func detachMainQueue() {
        if let mainQueueEvent { event_del(mainQueueEvent) }
    }

    /// The main queue has blocks: reset the descriptor's counter, then run them, here, on the main
    /// thread.
    private func mainQueueFired(_ descriptor: Int32) {
        loop.withCallbackEntered(as: .mainQueue) {
            var value: eventfd_t = 0
            // Read first: if the drain leaves blocks behind, libdispatch signals again.
            _ = eventfd_read(descriptor, &value)
            twl_loop_drain_main_queue()
        }
    }
}
