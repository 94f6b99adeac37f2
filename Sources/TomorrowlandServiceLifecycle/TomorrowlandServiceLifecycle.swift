// TomorrowlandServiceLifecycle: our loops as swift-service-lifecycle services, compiled only with
// the package trait `ServiceLifecycle`. Without the trait this module is empty, so that packages
// that do not enable it never resolve swift-service-lifecycle.
#if ServiceLifecycle
    import ServiceLifecycle
#endif
