#if canImport(Glibc)
    import Glibc
#endif

/// A POSIX thread that runs one closure and can be joined.
///
/// The closure is the only thing the thread touches besides what it
/// captures, which must be `Sendable`; results travel back through shared,
/// locked state.
final class WorkerThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    private var thread: pthread_t
    private var joined = false

    /// Starts a thread that runs `body`.
    init(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var handle = pthread_t()
        let status = pthread_create(
            &handle, nil,
            { context in
                let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
                body.run()
                return nil
            }, context)
        precondition(status == 0, "pthread_create failed: \(String(cString: strerror(status)))")
        thread = handle
    }

    /// Waits for the closure to return.
    func join() {
        guard !joined else { return }
        pthread_join(thread, nil)
        joined = true
    }

    deinit { join() }
}
