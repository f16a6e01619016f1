// PendingOutput's registry of the outputs being written, for the signal
// handler: on a hard exit (the fourth stop signal) each is moved to its final
// name with rename(2), which is async-signal-safe, before the process ends.

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
    /// Makes the registry before the handler is installed (a global's first
    /// use runs its initializer, which a signal handler must not).
    static func prepareSignalRegistry() {
        _ = signalSlots
    }

    /// Registers `writePath` → `finalPath` for a hard exit; the slot, or nil
    /// when all are taken (that output is then left under its hidden name).
    static func registerForSignals(writePath: String, finalPath: String) -> Int? {
        StopSignal.withSignalsBlocked {
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
        StopSignal.withSignalsBlocked {
            signalSlotLock.withLock { _ in
                signalSlots[2 * slot] = nil
                signalSlots[2 * slot + 1] = nil
            }
        }
    }

    /// Moves every registered output to its final name; called only from
    /// the signal handler, just before `_exit`.
    static func moveAllIntoPlaceFromSignalHandler() {
        for slot in 0..<signalSlotCount {
            if let from = signalSlots[2 * slot], let to = signalSlots[2 * slot + 1] {
                _ = rename(from, to)
            }
        }
    }
}
