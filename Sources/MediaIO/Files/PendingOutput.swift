import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// An output file written under a hidden temporary name beside its final
/// one (`dir/.NAME.partial-PID.EXT`, the extension kept so the container is
/// still told by it) and renamed into place only when complete. A failed or
/// interrupted write never leaves a file that looks complete under the
/// final name, and never destroys a file that was there before: without
/// ``commit()`` the temporary file is removed when the value goes away.
/// Standard output (`-`) and device files (`/dev/...`) are written directly.
/// A writer opens ``writePath``, writes and closes it, then calls ``commit()``.
///
/// A process that must end at once (a tool's signal handler, say) can still
/// leave every pending output under its final name: its handler calls
/// ``moveAllIntoPlaceFromSignalHandler()`` before `_exit` (see
/// PendingOutput+SignalRename.swift). Such a file may end mid-frame (an MP4
/// has no index), and it replaces a file of that name as a finished one would.
public final class PendingOutput {
    /// The name the file gets on ``commit()``.
    public let finalPath: String
    /// Where the bytes go until ``commit()``.
    public let writePath: String
    private var committed = false
    /// The slot in the signal handler's registry, if any.
    private var signalSlot: Int?

    /// Plans the output `path`; nothing is created yet (the caller opens
    /// ``writePath``).
    public init(_ path: String) {
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

    /// Moves the finished file to its final name (once; later calls do
    /// nothing). When the rename fails the temporary file is removed and the
    /// error names ``finalPath``.
    public func commit() throws(MediaError) {
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
    public func naming(_ error: MediaError) -> MediaError {
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
