import DecodeSession
import FormatConv
import MediaCore

/// Decodes a media file to frame files: an Annex-B H.264/HEVC elementary
/// stream (a file, or standard input for `-`) or a container's video track
/// (``MovieReader``), through DecodeSession's `StreamDecoder`, into
/// ``DecodedFrameFiles`` (Y4M, or frames packed without headers). What
/// `codecs decode` does, without its printing.
///
/// ```swift
/// let decoder = MediaFileDecoder(input: "clip.h264", output: "clip.y4m")
/// try decoder.open()
/// try decoder.run()
/// print("\(decoder.frames.framesWritten) frames")
/// ```
///
/// ``open()`` opens the input (after it, ``otherTracks`` names a
/// container's tracks that are not written); ``run(until:)`` decodes to the
/// end (or ``DecodedFrameFiles/end``, or until `shouldStop` says so), checks
/// that something was decoded and moves the files to their final names.
/// On an error the files written so far are removed; the statistics stay
/// readable for a report.
///
/// Limits: `start` and `duration` need a container input (an Annex-B
/// stream has no index to seek in); only the video track is decoded.
public final class MediaFileDecoder {
    /// The input path (`-`: standard input, read as Annex-B).
    public let inputPath: String
    /// The input's kind told by its name, nil when the name tells none (then
    /// read as Annex-B).
    public let inputKind: MediaFileKind?
    /// The decoder, its session and the frame files; read it for the report.
    public private(set) var decoder: StreamDecoder<DecodedFrameFiles>
    /// A container's tracks other than the video track decoded (filled by
    /// ``open()``); none is written.
    public private(set) var otherTracks: [MediaTrack] = []
    /// The index of a container's video track that is decoded (filled by
    /// ``open()``); nil for an Annex-B input.
    public private(set) var videoTrackIndex: Int?
    private let start: Double?
    private let namedCodec: (codec: CodecType, by: String)?
    private var reader: MovieReader?
    private var bytes: FileByteSource?

    /// The frame files written (and their counts).
    public var frames: DecodedFrameFiles { decoder.sink }

    /// Plans decoding `input` to `output` (`.y4m` or `-`: Y4M; any other
    /// name: frames packed without headers). `codec` names the codec of an
    /// Annex-B stream when its name does not (nil: the name's, else told by
    /// the first NAL unit); `codecNamedBy` says who named it, for the error
    /// when the stream contradicts it (default: "the codec given").
    /// `start` (seconds) seeks a container to the picture presented then;
    /// `duration` (seconds) writes the pictures presented up to
    /// `start + duration`. `settings.seekTarget` is set from `start`.
    public init(
        input: String, output: String, codec: CodecType? = nil, codecNamedBy: String? = nil,
        settings: StreamDecoderSettings = StreamDecoderSettings(), start: Double? = nil, duration: Double? = nil
    ) {
        inputPath = input
        let kind = MediaFileKind(path: input)
        inputKind = kind
        self.start = start
        namedCodec =
            codec.map { ($0, codecNamedBy ?? "the codec given") }
            ?? kind?.annexBCodec.map { ($0, "the name \(input)") }
        var files = DecodedFrameFiles(
            outputPath: output, packedPlanes: MediaFileKind(path: output, standardStream: .y4m) != .y4m)
        if let duration { files.end = (start ?? 0) + duration }
        var settings = settings
        settings.seekTarget = start.map { MediaTime(seconds: $0, timescale: 90_000) }
        decoder = StreamDecoder(codec: codec ?? kind?.annexBCodec, settings: settings, sink: files)
    }

    /// Called after each frame written, with the number written so far and
    /// the frames written per second (see ``DecodedFrameFiles/progress``).
    public var progress: ((_ framesWritten: Int, _ framesPerSecond: Double) -> Void)? {
        get { decoder.sink.progress }
        set { decoder.sink.progress = newValue }
    }

    /// Opens the input: a container (its other tracks listed in
    /// ``otherTracks``, seeked to `start`) or an Annex-B stream. Throws an
    /// `invalidArgument` error when `start` or `duration` is given for an
    /// Annex-B input.
    public func open() throws(MediaError) {
        guard inputKind?.container != nil else {
            if start != nil || decoder.sink.end != nil {
                throw .invalidArgument(
                    "\(inputPath): a start or a duration needs a container input (.mp4, .mov, .mkv, .ts)")
            }
            bytes = try FileByteSource(path: inputPath)
            return
        }
        let reader = try MovieReader(path: inputPath)
        otherTracks = reader.tracks.filter { $0.index != reader.trackIndex }
        videoTrackIndex = reader.trackIndex
        if let start { try reader.seek(to: MediaTime(seconds: start, timescale: 90_000)) }
        self.reader = reader
    }

    /// Decodes the input (opening it first if ``open()`` was not called) and
    /// writes its frames until the end, until the frame files are satisfied,
    /// or until `shouldStop` returns true (asked before each sample or
    /// 64 KiB read); then flushes the decoder and moves the files into
    /// place. Throws an `invalidData` error when no access unit could be
    /// decoded or no frame came out, and an `invalidArgument` error when the
    /// stream's NAL unit headers contradict the codec named.
    public func run(until shouldStop: () -> Bool = { false }) throws(MediaError) {
        if reader == nil && bytes == nil { try open() }
        if let reader {
            while !shouldStop(), !decoder.sink.isSatisfied, let sample = try reader.nextSample() {
                try decoder.decode(sample)
            }
        } else if let input = bytes {
            var first = true
            while !shouldStop() {
                let chunk = try input.read(upTo: 1 << 16)
                if chunk.isEmpty { break }
                // A codec the stream's own NAL unit headers contradict would only
                // show up later as missing parameter sets; say what is wrong now.
                if first, let named = namedCodec, let detected = AnnexB.detectCodec(in: chunk),
                    detected != named.codec
                {
                    let suffix = detected == .h264 ? "h264" : "hevc"
                    throw .invalidArgument(
                        "\(named.by) says \(Self.name(of: named.codec)), but the stream's NAL unit headers are "
                            + "\(Self.name(of: detected)); name it .\(suffix) or pass --codec \(detected.rawValue)")
                }
                first = false
                try decoder.append(chunk)
            }
        }
        try decoder.finish()
        try decoder.sink.close()
        guard decoder.session != nil else {
            throw .invalidData(
                "\(inputPath): no decodable access unit (is it an Annex-B \(decoder.codec?.rawValue ?? "H.264/HEVC") "
                    + "stream?)")
        }
        guard decoder.sink.framesWritten > 0 else {
            let reason = decoder.session?.dropReasons.entries.first?.reason ?? "the decoder returned no picture"
            throw .invalidData("\(inputPath): no frame could be decoded (\(reason))")
        }
    }

    /// "H.264" or "HEVC", as the messages write them.
    private static func name(of codec: CodecType) -> String { codec == .hevc ? "HEVC" : "H.264" }
}
