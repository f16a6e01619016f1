// PendingOutput's registry of the outputs being written, for a signal
// handler: on a hard exit each is moved to its final name with rename(2),
// which is async-signal-safe, before the process ends.

import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How many outputs at once the handler can move into place (computed: the
/// handler must not run a global's lazy initializer).
private var signalSlotCount: Int { 16 }

/// Pairs of C strings, prepared before any signal can need them: slot `i` is
/// `[2i]` the path written and `[2i + 1]` the final path; a nil `[2i]` is a
/// free slot. The handler reads them without a lock (pointer-sized stores);
/// the strings are never freed, so a pointer the handler loaded stays valid
/// (a command has a handful of outputs).
nonisolated(unsafe) private let signalSlots: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = {
    let slots = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: 2 * signalSlotCount)
    slots.initialize(repeating: nil, count: 2 * signalSlotCount)
    return slots
}()

/// Serializes registrations (the handler does not take it).
private let signalSlotLock = Mutex(())

extension PendingOutput {
    /// The signals whose handler may call ``moveAllIntoPlaceFromSignalHandler()``:
    /// `SIGINT`, `SIGTERM` and `SIGHUP`. They are blocked on the thread that
    /// registers or forgets an output, so the handler never sees a half-made
    /// registry entry on that thread (computed: a handler must not run a
    /// global's lazy initializer).
    public static var renamingSignals: [Int32] { [SIGINT, SIGTERM, SIGHUP] }

    /// Makes the registry; call it before installing a handler that calls
    /// ``moveAllIntoPlaceFromSignalHandler()`` (a global's first use runs its
    /// initializer, which a signal handler must not).
    public static func prepareSignalRegistry() {
        _ = signalSlots
    }

    /// Registers `writePath` → `finalPath` for a hard exit; the slot, or nil
    /// when all are taken (that output is then left under its hidden name).
    static func registerForSignals(writePath: String, finalPath: String) -> Int? {
        withRenamingSignalsBlocked {
            signalSlotLock.withLock { _ -> Int? in
                guard let slot = (0..<signalSlotCount).first(where: { signalSlots[2 * $0] == nil }) else {
                    return nil
                }
                // The final name first: the handler uses a slot once the path written is set.
                signalSlots[2 * slot + 1] = strdup(finalPath)
                signalSlots[2 * slot] = strdup(writePath)
                return slot
            }
        }
    }

    /// Frees `slot` (the output was moved into place or removed).
    static func unregisterForSignals(_ slot: Int) {
        withRenamingSignalsBlocked {
            signalSlotLock.withLock { _ in
                signalSlots[2 * slot] = nil
                signalSlots[2 * slot + 1] = nil
            }
        }
    }

    /// Runs `body` with ``renamingSignals`` blocked on this thread.
    private static func withRenamingSignalsBlocked<T>(_ body: () -> T) -> T {
        var blocked = sigset_t()
        var previous = sigset_t()
        sigemptyset(&blocked)
        for signal in renamingSignals { sigaddset(&blocked, signal) }
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return body()
    }

    /// Moves every output not yet committed to its final name with
    /// `rename(2)`, which is async-signal-safe: the hook a signal handler
    /// calls just before `_exit` (after ``prepareSignalRegistry()``). Up to
    /// 16 outputs at once are registered; more are left under their hidden
    /// names. Not for ordinary use: a moved file may be incomplete.
    public static func moveAllIntoPlaceFromSignalHandler() {
        for slot in 0..<signalSlotCount {
            if let from = signalSlots[2 * slot], let to = signalSlots[2 * slot + 1] {
                _ = rename(from, to)
            }
        }
    }
}
