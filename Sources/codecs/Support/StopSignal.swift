#if canImport(Glibc)
    import Glibc
#endif

/// The signal (SIGINT, SIGTERM, SIGHUP) that asked the tool to stop, or 0.
/// Written only by the signal handler, read by the work loops.
nonisolated(unsafe) private var receivedStopSignal: sig_atomic_t = 0

/// SIGINT, SIGTERM and SIGHUP end the work loops instead of the process, so
/// outputs are finished properly: an MP4 gets its index, a Y4M file ends on a
/// whole frame, `stream receive` (which only a signal stops without
/// `--frames`) keeps every frame it decoded. A second signal ends the process
/// at once, as usual.
enum StopSignal {
    static let handled: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Installs the handler for ``handled`` (without `SA_RESTART`, so a
    /// blocking read returns and its loop sees the request).
    static func install() {
        // A parent may hand the signals down blocked (a test runner does);
        // the tool wants them.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for signal in handled { sigaddset(&unblock, signal) }
        sigprocmask(SIG_UNBLOCK, &unblock, nil)
        for signal in handled {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                if receivedStopSignal != 0 { _exit(128 + number) }
                receivedStopSignal = number
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(signal, &action, nil)
        }
    }

    /// The signal that asked to stop, or nil.
    static var requested: Int32? { receivedStopSignal == 0 ? nil : receivedStopSignal }

    /// `SIGINT`, `SIGTERM`, `SIGHUP`.
    static func name(_ signal: Int32) -> String {
        switch signal {
        case SIGINT: return "SIGINT"
        case SIGTERM: return "SIGTERM"
        case SIGHUP: return "SIGHUP"
        default: return "signal \(signal)"
        }
    }
}
