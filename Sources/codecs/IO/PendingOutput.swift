import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// An output file written under a hidden temporary name beside its final
/// one (`dir/.NAME.partial-PID.EXT`, the extension kept so the container is
/// still told by it) and renamed into place only when complete. A failed or
/// interrupted command never leaves a file that looks complete under the
/// final name, and never destroys a file that was there before. Standard
/// output (`-`) and device files are written directly.
///
/// A process ended at once by repeated stop signals (see ``StopSignal``)
/// still leaves the file under its final name: the signal handler renames
/// every pending output before it exits (PendingOutput+SignalRename.swift).
/// That file may end mid-frame (an MP4 has no index), and it replaces a
/// file of that name as a finished one would.
final class PendingOutput {
    let finalPath: String
    /// Where the bytes go until ``commit()``.
    let writePath: String
    private var committed = false
    /// The slot in the signal handler's registry, if any.
    private var signalSlot: Int?

    init(_ path: String) {
        finalPath = path
        guard path != "-", !path.hasPrefix("/dev/") else {
            writePath = path
            return
        }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let stem = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[$0...]) } ?? ""
        writePath = "\(directory).\(stem).partial-\(getpid())\(ext)"
        signalSlot = Self.registerForSignals(writePath: writePath, finalPath: finalPath)
    }

    deinit {
        if let signalSlot { Self.unregisterForSignals(signalSlot) }
        if !committed && writePath != finalPath { unlink(writePath) }
    }

    /// Moves the finished file to its final name.
    func commit() throws(MediaError) {
        guard !committed else { return }
        committed = true
        guard writePath != finalPath else { return }
        // Renamed before the handler forgets it, so that a hard exit in
        // between leaves the file under its final name either way.
        let moved = rename(writePath, finalPath) == 0
        let code = errno
        if let signalSlot { Self.unregisterForSignals(signalSlot) }
        signalSlot = nil
        guard moved else {
            unlink(writePath)
            throw MediaError(
                .system, "\(finalPath): cannot move the finished file into place: \(String(cString: strerror(code)))")
        }
    }

    /// `error` with the temporary name replaced by the final one, so messages
    /// name the file the user asked for.
    func naming(_ error: MediaError) -> MediaError {
        guard writePath != finalPath else { return error }
        var renamed = error
        renamed.message = error.message.replacingOccurrences(of: writePath, with: finalPath)
        return renamed
    }
}

extension String {
    /// `self` with every occurrence of `target` replaced (no Foundation here).
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
