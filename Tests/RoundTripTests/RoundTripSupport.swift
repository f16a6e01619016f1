import DecodeSession
import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import TestSupport

/// Encoder settings the round trips run with.
enum EncoderSettings: String, CaseIterable, CustomStringConvertible {
    /// The encoder's defaults (look-ahead, B-frames where the codec uses them),
    /// with a keyframe every 24 frames so short clips hold more than one GOP.
    case standard
    /// Low latency: no look-ahead, no B-frames (x264/x265 `zerolatency`).
    case zeroLatency

    var description: String { rawValue }

    var properties: CompressionProperties {
        var properties = CompressionProperties()
        properties.maxKeyFrameInterval = 24
        properties.preset = "veryfast"
        if self == .zeroLatency {
            properties.realTime = true
            properties.allowFrameReordering = false
        }
        return properties
    }
}

/// One encoded clip: its samples in decode order and the same access units
/// written as one Annex-B stream, with the byte offset where each begins.
struct EncodedClip {
    var clip: SyntheticClip
    var samples: [CompressedSample]
    var stream: [UInt8]
    var offsets: [Int]
    var backend: String

    /// The Annex-B bytes of access unit `index`.
    func accessUnit(_ index: Int) -> ArraySlice<UInt8> {
        stream[offsets[index]..<(index + 1 < offsets.count ? offsets[index + 1] : stream.count)]
    }
}

let frameDuration = MediaTime(value: 1, timescale: 30)

/// Encodes `frames` frames of a 320×240 synthetic clip (or `width × height`)
/// and writes them as Annex-B with parameter sets before every keyframe.
func encodeClip(
    codec: CodecType, settings: EncoderSettings = .zeroLatency, encoder: CodecBackend = .software,
    frames: Int = 48, width: Int = 320, height: Int = 240, firstFrame: Int = 0, writer: inout AnnexBWriter
) throws -> EncodedClip {
    let clip = SyntheticClip(width: width, height: height, frameCount: firstFrame + frames)
    let session = try CompressionSession(
        width: width, height: height, codec: codec, encoder: encoder, properties: settings.properties)
    defer { session.invalidate() }
    let samples = try encodeClip(session, clip: clip, frames: firstFrame..<(firstFrame + frames), durations: true)
    let (stream, offsets) = try annexBStream(samples, writer: &writer)
    return EncodedClip(clip: clip, samples: samples, stream: stream, offsets: offsets, backend: session.backend)
}

func encodeClip(
    codec: CodecType, settings: EncoderSettings = .zeroLatency, encoder: CodecBackend = .software,
    frames: Int = 48, width: Int = 320, height: Int = 240
) throws -> EncodedClip {
    var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
    return try encodeClip(
        codec: codec, settings: settings, encoder: encoder, frames: frames, width: width, height: height,
        writer: &writer)
}

/// A deterministic generator of chunk sizes in `range` (xorshift64).
struct ChunkSizes {
    var range: ClosedRange<Int>
    var state: UInt64

    init(_ range: ClosedRange<Int>, seed: UInt64 = 0x2545_F491_4F6C_DD1D) {
        self.range = range
        self.state = seed
    }

    mutating func next() -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return range.lowerBound + Int(state % UInt64(range.count))
    }
}

/// Feeds `bytes` to a new assembler in chunks whose sizes `sizes` draws and
/// returns everything it produced, `finish()` included.
func assemble(_ bytes: some Collection<UInt8>, codec: CodecType, sizes: inout ChunkSizes) -> [AssemblerOutput] {
    let all = Array(bytes)
    var chunks: [ArraySlice<UInt8>] = []
    var offset = 0
    while offset < all.count {
        let end = min(all.count, offset + sizes.next())
        chunks.append(all[offset..<end])
        offset = end
    }
    // The receiver is told the frame rate, as the sender's application knows it.
    return assemble(chunks, codec: codec, frameDuration: frameDuration)
}

/// The frame index a pts at 1/30 s per frame stands for.
func frameIndex(_ pts: MediaTime) -> Int {
    Int(pts.converted(toTimescale: 30).value)
}
