import DecodeSession
import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import TestSupport
import Testing

/// The least luma PSNR any frame of a 320×240 synthetic clip must keep through
/// encode → Annex-B → reassembly → decode at the settings used here.
let framePSNRPassMark = 32.0

/// Every frame comes back, in order, with its pts, close to its source:
/// decoded in software and through the hardware path (the test VA-API
/// driver's decoding device).
@Test(arguments: [CodecType.h264, .hevc], EncoderSettings.allCases)
func everyFrameComesBack(codec: CodecType, settings: EncoderSettings) throws {
    for path in DecodePath.allCases { try everyFrameComesBack(codec: codec, settings: settings, path: path) }
}

private func everyFrameComesBack(codec: CodecType, settings: EncoderSettings, path: DecodePath) throws {
    let encoded = try encodeClip(codec: codec, settings: settings, frames: 48)
    var sizes = ChunkSizes(1...4096)
    let outputs = assemble(encoded.stream, codec: codec, sizes: &sizes)
    #expect(drops(outputs).count == 0)
    let received = samples(outputs)
    try #require(received.count == encoded.samples.count, "\(codec) \(settings)")

    for (index, (sent, got)) in zip(encoded.samples, received).enumerated() {
        // The payload survives Annex-B exactly; parameter sets travel in the
        // description, never in the sample.
        #expect(got.data == sent.data, "\(codec) \(settings) access unit \(index)")
        #expect(got.isKeyframe == sent.isKeyframe, "\(codec) \(settings) access unit \(index)")
        #expect(got.formatDescription.parameterSets == sent.formatDescription.parameterSets)
        if settings == .zeroLatency {
            // Without reordering, decode order is presentation order, and the
            // assembler's numbering at the frame rate gives back the encoder's pts.
            #expect(got.pts == sent.pts, "\(codec) \(settings) access unit \(index)")
        }
    }

    // Timestamps travel beside Annex-B (as a container or RTP would carry
    // them); the decoder must hand them back in presentation order.
    let timed = zip(encoded.samples, received).map { sent, got in
        var sample = got
        sample.pts = sent.pts
        sample.dts = sent.dts
        return sample
    }
    let (frames, session) = try decodeAll(timed, path: path, annexB: encoded.stream)
    #expect(session?.backend == path.backendName, "\(codec) \(settings) \(path)")
    #expect(frames.map { frameIndex($0.pts) } == Array(0..<48), "\(codec) \(settings) \(path)")
    for frame in frames {
        let psnr = PictureQuality.psnr(frame.pixelBuffer, encoded.clip.frame(at: frameIndex(frame.pts))).y
        #expect(psnr >= framePSNRPassMark, "\(codec) \(settings) \(path) frame \(frameIndex(frame.pts)): \(psnr) dB")
    }
    #expect(session?.drops.isEmpty == true)
}

/// Chunk boundaries anywhere — down to single bytes — give the same access
/// units as the whole stream in one piece.
@Test(arguments: [CodecType.h264, .hevc], [1...1, 2...3, 1...17, 100...1500, 1...65536])
func chunkSizesDoNotMatter(codec: CodecType, sizes range: ClosedRange<Int>) throws {
    let encoded = try encodeClip(codec: codec, frames: 30)
    var whole = ChunkSizes(encoded.stream.count...encoded.stream.count)
    let reference = samples(assemble(encoded.stream, codec: codec, sizes: &whole))
    var sizes = ChunkSizes(range)
    let chunked = samples(assemble(encoded.stream, codec: codec, sizes: &sizes))
    try #require(chunked.count == reference.count, "\(codec) chunks \(range)")
    #expect(reference.count == encoded.samples.count)
    for (index, (a, b)) in zip(reference, chunked).enumerated() {
        #expect(a.data == b.data && a.isKeyframe == b.isKeyframe && a.pts == b.pts, "\(codec) \(range) unit \(index)")
        #expect(a.formatDescription == b.formatDescription, "\(codec) \(range) unit \(index)")
    }
}

/// A receiver that joins mid-GOP drops what it cannot decode, starts at the
/// next keyframe and from there on decodes exactly what a receiver that saw
/// everything decodes.
@Test(arguments: [CodecType.h264, .hevc])
func lateJoinStartsAtTheNextKeyframe(codec: CodecType) throws {
    let encoded = try encodeClip(codec: codec, frames: 60)
    let keyframes = encoded.samples.indices.filter { encoded.samples[$0].isKeyframe }
    try #require(keyframes.count >= 2 && keyframes[0] == 0, "keyframes at \(keyframes)")
    let joinAt = keyframes[1] / 2  // in the middle of the first GOP
    var sizes = ChunkSizes(1...2000)
    let outputs = assemble(encoded.stream[encoded.offsets[joinAt]...], codec: codec, sizes: &sizes)

    // Everything before the second keyframe is reported, not decoded.
    #expect(drops(outputs).count > 0)
    let received = samples(outputs)
    #expect(received.count == encoded.samples.count - keyframes[1])
    #expect(received.first?.isKeyframe == true)
    #expect(received.map(\.data) == encoded.samples[keyframes[1]...].map(\.data))

    let full = try decodeAll(encoded.samples).frames
    let joined = try decodeAll(received).frames
    let fullTail = full.suffix(joined.count)
    #expect(joined.count == encoded.samples.count - keyframes[1])
    for (mine, theirs) in zip(joined, fullTail) {
        #expect(mine.pixelBuffer.packedBytes() == theirs.pixelBuffer.packedBytes())
    }
}

/// An access unit lost on the way: the receiver notices the gap in the
/// sender's numbering, skips to the next keyframe, and from there its frames
/// are bit-identical to an undisturbed decode; frames before the loss are too.
@Test(arguments: [CodecType.h264, .hevc])
func droppedAccessUnitRecoversAtTheNextKeyframe(codec: CodecType) throws {
    let encoded = try encodeClip(codec: codec, frames: 60)
    let keyframes = encoded.samples.indices.filter { encoded.samples[$0].isKeyframe }
    try #require(keyframes.count >= 2)
    let lost = keyframes[1] - 5
    // The wire without access unit `lost`; its neighbours' numbers travel beside it.
    var wire: [UInt8] = []
    var numbers: [Int] = []
    for index in encoded.samples.indices where index != lost {
        wire += encoded.accessUnit(index)
        numbers.append(index)
    }
    var sizes = ChunkSizes(1...700)
    let received = samples(assemble(wire, codec: codec, sizes: &sizes))
    try #require(received.count == numbers.count)

    var decodable: [CompressedSample] = []
    var skipped: [Int] = []
    var waitingForKeyframe = false
    for (position, sample) in received.enumerated() {
        if position > 0 && numbers[position] != numbers[position - 1] + 1 { waitingForKeyframe = true }
        if waitingForKeyframe && !sample.isKeyframe {
            skipped.append(numbers[position])
            continue
        }
        waitingForKeyframe = false
        decodable.append(sample)
    }
    #expect(skipped == Array((lost + 1)..<keyframes[1]))

    let full = try decodeAll(encoded.samples).frames
    let recovered = try decodeAll(decodable).frames
    #expect(recovered.count == encoded.samples.count - (keyframes[1] - lost))
    let expectedIndexes = Array(0..<lost) + Array(keyframes[1]..<encoded.samples.count)
    #expect(
        zip(recovered, expectedIndexes).allSatisfy { frame, index in
            frame.pixelBuffer.packedBytes() == full[index].pixelBuffer.packedBytes()
        })
}

/// Without the receiver's help the decoder itself gets the broken GOP: it may
/// conceal or drop those frames, but it accounts for every sample and is back
/// to exact pictures at the next keyframe.
@Test(arguments: [CodecType.h264, .hevc])
func decoderRecoversFromAMissingReference(codec: CodecType) throws {
    let encoded = try encodeClip(codec: codec, frames: 60)
    let keyframes = encoded.samples.indices.filter { encoded.samples[$0].isKeyframe }
    try #require(keyframes.count >= 2)
    let lost = keyframes[1] - 5
    let damaged = encoded.samples.indices.filter { $0 != lost }.map { encoded.samples[$0] }
    let full = try decodeAll(encoded.samples).frames
    let (frames, session) = try decodeAll(damaged)
    let statistics = try #require(session?.statistics)
    #expect(statistics.submitted == damaged.count)
    #expect(statistics.decoded + statistics.dropped + statistics.pending == statistics.submitted)
    #expect(frames.count == statistics.decoded)
    let byIndex = Dictionary(frames.map { (frameIndex($0.pts), $0) }, uniquingKeysWith: { first, _ in first })
    for index in Array(0..<lost) + Array(keyframes[1]..<encoded.samples.count) {
        let frame = try #require(byIndex[index], "\(codec): frame \(index) missing after recovery")
        #expect(frame.pixelBuffer.packedBytes() == full[index].pixelBuffer.packedBytes(), "\(codec) frame \(index)")
    }
}

/// The sender switches to a new session at another size halfway; the
/// receiver gets a new FormatDescription from the new in-band parameter sets
/// and one decoder session follows it.
@Test(arguments: [CodecType.h264, .hevc])
func resolutionChangeMidStream(codec: CodecType) throws {
    var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
    let first = try encodeClip(codec: codec, frames: 24, width: 320, height: 240, writer: &writer)
    let second = try encodeClip(
        codec: codec, frames: 24, width: 160, height: 120, firstFrame: 24, writer: &writer)
    var sizes = ChunkSizes(1...1024)
    let received = samples(assemble(first.stream + second.stream, codec: codec, sizes: &sizes))
    try #require(received.count == first.samples.count + second.samples.count)

    var descriptions: [FormatDescription] = []
    for sample in received where descriptions.last != sample.formatDescription {
        descriptions.append(sample.formatDescription)
    }
    #expect(descriptions.map { "\($0.width)x\($0.height)" } == ["320x240", "160x120"])

    let (frames, _) = try decodeAll(received)
    #expect(frames.map { frameIndex($0.pts) } == Array(0..<48))
    for frame in frames {
        let index = frameIndex(frame.pts)
        let source = index < 24 ? first.clip.frame(at: index) : second.clip.frame(at: index)
        #expect(frame.pixelBuffer.width == source.width && frame.pixelBuffer.height == source.height)
        let psnr = PictureQuality.psnr(frame.pixelBuffer, source).y
        #expect(psnr >= framePSNRPassMark, "\(codec) frame \(index): \(psnr) dB")
    }
}
