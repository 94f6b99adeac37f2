import Tomorrowland

/// Something that holds libevent objects on a loop's base (a TCP listener, connection or
/// connection attempt) and must release them before the base goes away.
///
/// The loop keeps each registered resource alive (a strong reference in
/// ``EventLoop/resources``): the libevent callbacks of a resource carry it as an unretained
/// context pointer, and that registry reference is what keeps the pointer valid. A resource
/// unregisters itself right after it frees its libevent objects. At ``EventLoop/shutdown()`` the
/// loop closes every resource still registered, before it frees the base.
protocol EventLoopResource: AnyObject {
    /// Frees the resource's libevent objects and resolves what waits on it, because the loop is
    /// shutting down; on the loop's thread. Must unregister the resource.
    func closeForShutdown()
}

/// A registered resource and when it was registered.
struct RegisteredResource {
    /// Increases with each registration: the order shutdown closes resources in.
    var order: UInt64
    var resource: any EventLoopResource
}

extension EventLoop {
    /// Keeps `resource` alive while its libevent objects exist; on the loop's thread.
    func register(resource: any EventLoopResource) {
        nextResourceOrder &+= 1
        resources[ObjectIdentifier(resource)] = RegisteredResource(order: nextResourceOrder, resource: resource)
    }

    /// Drops the registry's reference; on the loop's thread, after the resource freed its
    /// libevent objects.
    func unregister(resource: any EventLoopResource) {
        resources[ObjectIdentifier(resource)] = nil
    }

    /// Shutdown step: closes every registered resource. Closing may run user code (promise
    /// callbacks on `.immediate`) that registers new ones, hence the rounds.
    func closeAllResources() {
        while !resources.isEmpty {
            // In registration order, not the dictionary's (which depends on addresses and on the
            // process's hash seed): a simulated host's shutdown must replay the same from a seed.
            let live = resources.values.sorted { $0.order < $1.order }.map(\.resource)
            for resource in live { resource.closeForShutdown() }
            for resource in live { resources[ObjectIdentifier(resource)] = nil }
        }
    }
}
