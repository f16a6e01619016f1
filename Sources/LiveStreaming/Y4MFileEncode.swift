// A Y4M clip encoded into a file: the reader, the compression session and the
// sample sink, with the clip's frame rate and colour space given to the encoder.
import EncodeSession
import FormatConv
import MediaCore
import MediaIO

/// A raw Y4M clip (a file, or `-` for standard input) encoded into an
/// Annex-B stream or a container (``SampleSink``), frame by frame, not in
/// real time.
///
/// The clip's header decides the encoder's frame rate (a header that says
/// `F0:0`, unknown, keeps the encoder's 30 fps, and the frame times are then
/// 1/30 s) and its pixel format (the Y4M colour space is the coded one).
/// A clip whose last frame is torn (the file ends inside it) is encoded up
/// to the whole frames before it; ``tornTail`` says what was left out.
///
/// For a clip sent live (paced, with the transport's feedback), use
/// ``LivePipeline``.
public final class Y4MFileEncode {
    /// The clip's header.
    public let header: Y4MHeader
    /// The session encoding the clip.
    public let session: CompressionSession
    /// The reader's message for a last frame the input ends inside, when the
    /// whole frames before it were encoded; nil otherwise.
    public private(set) var tornTail: String?
    private let reader: Y4MReader
    private let sink: SampleSink

    /// Opens `input`, creates the session for its size with `properties`
    /// (their frame rate and pixel format replaced by the clip's) and
    /// creates `output`.
    ///
    /// - Throws: what ``Y4MReader/init(path:)``,
    ///   ``CompressionSession/init(width:height:codec:encoder:properties:)``
    ///   and ``SampleSink/init(path:kind:options:)`` throw.
    public init(
        input: String, output: String, kind: MediaFileKind, codec: CodecType, encoder: CodecBackend = .automatic,
        properties: CompressionProperties = .init(), options: MovieWriterOptions = MovieWriterOptions()
    ) throws(MediaError) {
        reader = try Y4MReader(path: input)
        header = reader.header
        var properties = properties
        if header.frameDuration.isValid {
            properties.expectedFrameRate =
                Double(header.frameDuration.timescale) / Double(header.frameDuration.value)
        }
        properties.pixelFormat = header.pixelFormat
        session = try CompressionSession(
            width: header.width, height: header.height, codec: codec, encoder: encoder, properties: properties)
        sink = try SampleSink(path: output, kind: kind, options: options)
    }

    /// Encodes the clip to its end, to `frameLimit` frames, or until
    /// `shouldStop` returns true, and finishes the output. `progress` hears
    /// the frames and bytes written so far after each frame.
    ///
    /// - Throws: what reading (except a torn last frame after whole ones),
    ///   encoding or writing throws.
    public func run(
        frameLimit: Int? = nil, until shouldStop: () -> Bool = { false },
        progress: (_ frames: Int, _ bytes: Int) -> Void = { _, _ in }
    ) throws(MediaError) -> CompressionSession.FramesReport {
        let frameDuration = header.frameDuration.isValid ? header.frameDuration : MediaTime(value: 1, timescale: 30)
        var read = 0
        let report = try session.encodeFrames(
            frameDuration: frameDuration, frameLimit: frameLimit, shouldStop: shouldStop,
            nextFrame: { () throws(MediaError) -> PixelBuffer? in
                do throws(MediaError) {
                    let frame = try reader.readFrame()
                    if frame != nil { read += 1 }
                    return frame
                } catch  where reader.endsInsideAFrame && read > 0 {
                    tornTail = error.message
                    return nil
                }
            },
            write: { (sample) throws(MediaError) -> Int in try sink.write(sample) },
            progress: progress)
        try sink.finish()
        return report
    }
}
