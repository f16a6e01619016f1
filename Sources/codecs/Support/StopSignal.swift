import MediaIO

#if canImport(Glibc)
    import Glibc
#endif

/// The signal (SIGINT, SIGTERM, SIGHUP) that asked the tool to stop, or 0.
/// Written only by the signal handler, read by the work loops.
nonisolated(unsafe) private var receivedStopSignal: sig_atomic_t = 0
/// How many stop signals arrived; written only by the signal handler.
nonisolated(unsafe) private var stopSignalCount: sig_atomic_t = 0

/// SIGINT, SIGTERM and SIGHUP end the work loops instead of the process, so
/// outputs are finished properly: an MP4 gets its index, a Y4M file ends on a
/// whole frame, `stream receive` (which only a signal stops without
/// `--frames`) keeps every frame it decoded. Every wait (for a client, a
/// caller, a publisher, a handshake, a packet) looks at the request at least
/// every 0.1 s.
///
/// A signal delivered twice (as `timeout`, process supervisors and a Ctrl-C
/// in a shell do, to the process and to its group) is still one stop. Only
/// the fourth signal (``hardExitCount``) ends the process at once, as
/// FFmpeg's tool does after more than three; even then the outputs being
/// written are moved to their final names first (MediaIO's ``PendingOutput``
/// hook, `rename(2)` from the handler), so nothing is left hidden, though the
/// last frame may be cut short.
enum StopSignal {
    /// The signals PendingOutput's registry is guarded against.
    static let handled: [Int32] = PendingOutput.renamingSignals
    /// The signal that ends the process at once (computed: the handler
    /// must not run a lazy initializer).
    static var hardExitCount: sig_atomic_t { 4 }

    /// Installs the handler for ``handled`` (without `SA_RESTART`, so a
    /// blocking read returns and its loop sees the request).
    static func install() {
        // A parent may hand the signals down blocked (a test runner does);
        // the tool wants them.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for signal in handled { sigaddset(&unblock, signal) }
        sigprocmask(SIG_UNBLOCK, &unblock, nil)
        PendingOutput.prepareSignalRegistry()
        for signal in handled {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                // Only async-signal-safe calls here: rename(2) and _exit(2).
                stopSignalCount += 1
                if receivedStopSignal == 0 { receivedStopSignal = number }
                if stopSignalCount >= StopSignal.hardExitCount {
                    PendingOutput.moveAllIntoPlaceFromSignalHandler()
                    _exit(128 + number)
                }
            }
            // The other stop signals wait while the handler runs, so that
            // the count and the renames are not interleaved.
            sigemptyset(&action.sa_mask)
            for other in handled { sigaddset(&action.sa_mask, other) }
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
