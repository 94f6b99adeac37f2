// TomorrowlandNIO: SwiftNIO interop, compiled only with the package trait `NIO`. Without the
// trait this module is empty, so that packages that do not enable it never resolve SwiftNIO.
#if NIO
    import NIOCore
#endif
