// A ladder as HLS: one fMP4 rendition per layer (MediaIO's HLS publisher) and the master playlist over them.
import FormatConv
import MediaCore
import MediaIO

#if canImport(Glibc)
    import Glibc
#endif

/// Writes the layers of a ``LiveLadder`` as HLS renditions with a master playlist, for a static HTTP server.
///
/// Layer `rid` goes to `DIRECTORY/rid/index.m3u8` (fMP4 segments cut at keyframes, through
/// `MediaStreamSender`'s HLS transport with `options`), and `DIRECTORY/master.m3u8` (or the name given) lists
/// every rendition,
/// top layer first, with
/// - `BANDWIDTH`: the peak segment bit rate (RFC 8216 4.3.4.2): the largest segment file's bits over its
///   `EXTINF` duration among the segments listed in the rendition's playlist; before its first segment, the
///   layer's configured bit rate. `AVERAGE-BANDWIDTH`: all its segments' bits over their total duration.
/// - `CODECS`: the RFC 6381 string of the layer's parameter sets (`avc1.42C01F`, `hvc1.1.6.L93.B0`).
/// - `RESOLUTION`: the layer's picture size from its SPS.
///
/// The master playlist is written once every layer sent its first keyframe and written again (replaced
/// whole, through a rename) after each keyframe and at the end, so its figures cover the segments written
/// so far. Frames are not paced here: the pipeline paces.
public final class LadderHLSSink: LiveLadderSink {
    /// The ladder written.
    public let ladder: LiveLadder
    /// The folder holding the master playlist and a folder per layer.
    public let directory: String
    /// The master playlist's file name in ``directory``.
    public let masterPlaylistName: String
    /// The layers' senders, top first.
    public let renditions: [MediaStreamSender]
    /// The master playlist's path.
    public var masterPlaylistPath: String { directory + "/" + masterPlaylistName }
    /// Times the master playlist was written.
    public private(set) var masterPlaylistWrites = 0

    private var formats: [FormatDescription?]

    /// A sink whose master playlist is `masterPlaylistPath` (`DIR/NAME.m3u8`): DIR holds the renditions (the
    /// current folder for a bare file name, `/` for a file at the root), as
    /// ``init(directory:ladder:options:masterPlaylistName:)`` with NAME.
    public convenience init(masterPlaylistPath: String, ladder: LiveLadder, options: StreamOptions = .init())
        throws(MediaError)
    {
        let slash = masterPlaylistPath.lastIndex(of: "/")
        let directory = slash.map { String(masterPlaylistPath[..<$0]) } ?? "."
        let name =
            slash.map { String(masterPlaylistPath[masterPlaylistPath.index(after: $0)...]) } ?? masterPlaylistPath
        try self.init(
            directory: directory.isEmpty ? "/" : directory, ladder: ladder, options: options,
            masterPlaylistName: name)
    }

    /// Creates `directory` and a folder per layer in it (existing ones are kept); nothing is written before
    /// the first keyframe. The master playlist is `directory/masterPlaylistName`, a file name ending in `.m3u8`.
    public init(
        directory: String, ladder: LiveLadder, options: StreamOptions = .init(),
        masterPlaylistName: String = "master.m3u8"
    ) throws(MediaError) {
        guard masterPlaylistName.hasSuffix(".m3u8"), masterPlaylistName.count > 5, !masterPlaylistName.contains("/")
        else {
            throw .invalidArgument("\(masterPlaylistName): a master playlist is a file name ending in .m3u8")
        }
        self.ladder = ladder
        self.directory = directory
        self.masterPlaylistName = masterPlaylistName
        try Self.makeDirectory(directory)
        var renditions: [MediaStreamSender] = []
        for layer in ladder.layers {
            try Self.makeDirectory(directory + "/" + layer.rid)
            renditions.append(try MediaStreamSender(url: directory + "/" + layer.rid + "/index.m3u8", options: options))
        }
        self.renditions = renditions
        formats = Array(repeating: nil, count: ladder.layers.count)
    }

    /// Sends each layer's sample to its rendition; after a keyframe, writes the master playlist again.
    public func sendLive(layers samples: [CompressedSample]) throws(MediaError) -> StreamFeedback {
        guard samples.count == ladder.layers.count else {
            throw .invalidArgument("\(samples.count) samples for a ladder of \(ladder.layers.count) layers")
        }
        for (index, sample) in samples.enumerated() {
            _ = try renditions[index].send(sample)
            if sample.isKeyframe { formats[index] = sample.formatDescription }
        }
        if samples.contains(where: \.isKeyframe) { try writeMasterPlaylist() }
        return StreamFeedback()
    }

    /// Refused: a ladder sink takes one sample per layer (``sendLive(layers:)``).
    public func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
        throw .invalidArgument("the HLS ladder takes one sample per layer for each frame, not one encode")
    }

    /// No feedback to read: waits out `seconds`.
    public func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback {
        MediaStreamSender.sleep(seconds: seconds)
        return StreamFeedback()
    }

    /// Ends every rendition (its last segment and `#EXT-X-ENDLIST`) and writes the master playlist once more.
    public func finishLive() throws(MediaError) {
        for rendition in renditions { try rendition.finish() }
        try writeMasterPlaylist()
    }

    /// The master playlist's text now; nil until every layer sent a keyframe.
    public func masterPlaylist() -> String? {
        guard formats.allSatisfy({ $0 != nil }) else { return nil }
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        for (index, layer) in ladder.layers.enumerated() {
            let format = formats[index]!
            let measured = Self.segmentBitRates(playlist: directory + "/" + layer.rid + "/index.m3u8")
            var attributes = ["BANDWIDTH=\(measured?.peak ?? layer.bitRate)"]
            if let average = measured?.average { attributes.append("AVERAGE-BANDWIDTH=\(average)") }
            attributes.append("CODECS=\"\(format.codecString)\"")
            attributes.append("RESOLUTION=\(format.width)x\(format.height)")
            lines.append("#EXT-X-STREAM-INF:" + attributes.joined(separator: ","))
            lines.append(layer.rid + "/index.m3u8")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func writeMasterPlaylist() throws(MediaError) {
        guard let text = masterPlaylist() else { return }
        try Self.replaceFile(masterPlaylistPath, with: Array(text.utf8))
        masterPlaylistWrites += 1
    }

    /// The peak and average bit rates of the segments a media playlist lists (sizes of the files beside it
    /// over their `EXTINF` durations, rounded up); nil when it lists none yet.
    static func segmentBitRates(playlist path: String) -> (peak: Int, average: Int)? {
        guard let text = readFile(path) else { return nil }
        let folder = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        var duration: Double?
        var peak = 0.0
        var totalBits = 0.0
        var totalSeconds = 0.0
        for line in text.split(separator: "\n").map({ $0.hasSuffix("\r") ? $0.dropLast() : $0[...] }) {
            if line.hasPrefix("#EXTINF:") {
                duration = Double(line.dropFirst(8).prefix { $0 != "," })
            } else if !line.isEmpty, !line.hasPrefix("#"), let seconds = duration, seconds > 0 {
                duration = nil
                guard let size = fileSize(folder + "/" + String(line)) else { continue }
                peak = max(peak, Double(size * 8) / seconds)
                totalBits += Double(size * 8)
                totalSeconds += seconds
            }
        }
        guard totalSeconds > 0 else { return nil }
        return (Int(peak.rounded(.up)), Int((totalBits / totalSeconds).rounded(.up)))
    }

    private static func makeDirectory(_ path: String) throws(MediaError) {
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw .invalidArgument("\(path): cannot create the folder (\(String(cString: strerror(errno))))")
        }
    }

    private static func fileSize(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }

    private static func readFile(_ path: String) -> String? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `bytes` to a temporary file beside `path`, then renames it over `path` (a reader sees the old
    /// file or the new one, never half of one).
    private static func replaceFile(_ path: String, with bytes: [UInt8]) throws(MediaError) {
        let temporary = path + ".tmp"
        guard let file = fopen(temporary, "wb") else {
            throw .invalidArgument("\(temporary): cannot write (\(String(cString: strerror(errno))))")
        }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        let closed = fclose(file)
        guard written == bytes.count, closed == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw .invalidArgument("\(path): cannot write the master playlist (\(String(cString: strerror(errno))))")
        }
    }
}
