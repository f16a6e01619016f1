import DecodeSession
import EncodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO

/// Encodes frames `range` of `clip` (all of it when `range` is nil) through
/// `session`, then drains the session with `finish()`.
///
/// Frame `index` gets the clip's presentation time for that index; with
/// `durations` it also gets the clip's frame duration (otherwise none), and
/// the indexes in `forceKeyFrames` are forced keyframes.
///
/// - Returns: every sample the session produced, in decode order.
public func encodeClip(
    _ session: CompressionSession, clip: SyntheticClip, frames range: Range<Int>? = nil, durations: Bool = false,
    forceKeyFrames: Set<Int> = []
) throws -> [CompressedSample] {
    var samples: [CompressedSample] = []
    for index in range ?? 0..<clip.frameCount {
        let options = FrameOptions(forceKeyFrame: forceKeyFrames.contains(index))
        samples += try session.encode(
            clip.frame(at: index), pts: clip.presentationTime(ofFrame: index),
            duration: durations ? clip.frameDuration : .invalid, options: options)
    }
    samples += try session.finish()
    return samples
}

/// Encodes the first `count` frames of a ``SyntheticClip`` of the session's
/// size in `format` (30 fps) and drains the session.
public func encodeClip(
    _ session: CompressionSession, count: Int, format: PixelFormat = .i420, forceKeyFrames: Set<Int> = []
) throws -> [CompressedSample] {
    let clip = SyntheticClip(width: session.width, height: session.height, frameCount: count, format: format)
    return try encodeClip(session, clip: clip, frames: 0..<count, forceKeyFrames: forceKeyFrames)
}

/// Decodes every sample through `session`, each with its pts as the user
/// value, and drains the session with `finish()`.
///
/// - Returns: the decoded frames in the order the session delivered them.
public func decodeAll(_ session: DecompressionSession, _ samples: some Sequence<CompressedSample>) throws
    -> [DecodedFrame]
{
    var frames: [DecodedFrame] = []
    for sample in samples { frames += try session.decode(sample, userValue: sample.pts) }
    frames += try session.finish()
    return frames
}

/// Decodes `samples` in software to I420 with one session, made from the
/// first sample's format description, and drains it.
///
/// - Returns: the frames, and the session for its statistics and drops
///   (nil when `samples` is empty).
public func decodeAll(_ samples: [CompressedSample]) throws -> (
    frames: [DecodedFrame], session: DecompressionSession?
) {
    guard let first = samples.first else { return ([], nil) }
    let session = try DecompressionSession(
        formatDescription: first.formatDescription, decoder: .software,
        output: DecoderOutputAttributes(pixelFormat: .i420))
    return (try decodeAll(session, samples), session)
}

/// Decodes `samples` with one session the way `path` says, in the stream's
/// planar layout: in software, or on a test VA-API device that decodes
/// `annexB` (the same stream as Annex-B), so that every picture comes
/// through the hardware path (NV12 surfaces, repacked).
///
/// - Returns: the frames, and the session for its backend, statistics and
///   drops (nil when `samples` is empty).
public func decodeAll(_ samples: [CompressedSample], path: DecodePath, annexB: [UInt8]) throws -> (
    frames: [DecodedFrame], session: DecompressionSession?
) {
    guard let first = samples.first else { return ([], nil) }
    let output = DecoderOutputAttributes(pixelFormat: first.formatDescription.planarPixelFormat)
    switch path {
    case .software:
        let session = try DecompressionSession(
            formatDescription: first.formatDescription, decoder: .software, output: output)
        return (try decodeAll(session, samples), session)
    case .hardware:
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stream = directory.path("stream.\(first.formatDescription.codec == .hevc ? "hevc" : "h264")")
        try Data(annexB).write(to: URL(fileURLWithPath: stream))
        let device = try TestVADriver.makeDevice(in: directory, decodeReference: stream)
        let session = try DecompressionSession(
            formatDescription: first.formatDescription, decoder: .vaapi(device: device), output: output)
        return (try decodeAll(session, samples), session)
    }
}
