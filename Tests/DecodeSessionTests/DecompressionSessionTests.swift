import DecodeSession
import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

/// One stream made with the ffmpeg CLI and the pixel format ffmpeg decodes it to.
struct StreamCase: Sendable, CustomStringConvertible {
    var name: String
    var codec: CodecType
    var width = 320
    var height = 240
    var frames = 30
    var pixelFormat = "yuv420p"
    var encoderArgs: [String] = []
    var threads: Int? = nil

    var description: String { name }
}

@Suite struct DecompressionSessionTests {
    @Test func md5MatchesKnownVectors() {
        #expect(MD5.hex(Array("abc".utf8)) == "900150983cd24fb0d6963f7d28e17f72")
        #expect(MD5.hex([]) == "d41d8cd98f00b204e9800998ecf8427e")
    }

    static let bitExactCases: [StreamCase] = [
        StreamCase(name: "h264 B-frames", codec: .h264, encoderArgs: ["-bf", "3", "-g", "12"]),
        StreamCase(name: "h264 B-frames one thread", codec: .h264, encoderArgs: ["-bf", "2"], threads: 1),
        StreamCase(name: "h264 4 slices", codec: .h264, encoderArgs: ["-x264-params", "slices=4", "-bf", "1"]),
        StreamCase(name: "h264 odd size", codec: .h264, width: 175, height: 143, encoderArgs: ["-bf", "2"]),
        StreamCase(
            name: "h264 10-bit", codec: .h264, frames: 20, pixelFormat: "yuv420p10le",
            encoderArgs: ["-profile:v", "high10"]),
        StreamCase(name: "hevc B-frames", codec: .hevc, frames: 20, encoderArgs: ["-bf", "3"]),
        StreamCase(
            name: "hevc 10-bit odd size", codec: .hevc, width: 175, height: 143, frames: 15, pixelFormat: "yuv420p10le"),
    ]

    /// Every picture equals what `ffmpeg -f framemd5` decodes from the same file.
    @Test(arguments: bitExactCases)
    func picturesAreBitExactWithFFmpeg(_ stream: StreamCase) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make(
            "stream", in: directory, codec: stream.codec, width: stream.width, height: stream.height,
            frames: stream.frames, pixelFormat: stream.pixelFormat, encoderArgs: stream.encoderArgs)
        let samples = try TestStreams.samples(ofFile: path, codec: stream.codec)
        #expect(samples.count == stream.frames)
        let session = try DecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software, threadCount: stream.threads)
        let frames = try decodeAll(session, samples)
        let expected = try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: stream.pixelFormat)
        #expect(frames.count == stream.frames)
        #expect(frames.map { md5Hex($0.pixelBuffer) } == expected, "\(stream)")
        // 4:2:0 cropping works in units of two samples (H.264 7.4.2.1.1 CropUnitX/Y,
        // H.265 7.4.3.2.1 SubWidthC/SubHeightC), so an odd request is encoded one smaller:
        // 175x143 becomes 174x142, a size that is not a multiple of the 16x16 macroblock.
        let (width, height) = (stream.width & ~1, stream.height & ~1)
        #expect(frames.allSatisfy { $0.pixelBuffer.width == width && $0.pixelBuffer.height == height })
        #expect(samples[0].formatDescription.width == width && samples[0].formatDescription.height == height)
        #expect(frames.first?.pixelBuffer.format == (stream.pixelFormat == "yuv420p" ? .i420 : .i010))
        #expect(session.statistics == DecodeStatistics(submitted: stream.frames, decoded: stream.frames))
        #expect(session.drops.isEmpty)
        #expect(session.backend == "libavcodec")
    }

    /// The caller's value travels with its sample through B-frame reordering.
    @Test func userValueFollowsItsSampleThroughReordering() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make("bframes", in: directory, codec: .h264, encoderArgs: ["-bf", "3"])
        var samples = try TestStreams.samples(ofFile: path, codec: .h264)
        // Distinct, non-monotonic pts so a mix-up would show.
        for index in samples.indices {
            samples[index].pts = MediaTime(value: Int64(1000 - index * 7), timescale: 90000)
        }
        let session = try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software)
        var frames: [DecodedFrame] = []
        for (index, sample) in samples.enumerated() { frames += try session.decode(sample, userValue: index) }
        frames += try session.finish()
        #expect(frames.count == samples.count)
        for frame in frames {
            let index = try #require(frame.userValue as? Int)
            #expect(samples[index].pts == frame.pts)
            #expect(samples[index].isKeyframe == frame.isKeyframe)
        }
        // Output is in display order, so decode-order indices come out permuted.
        let order = frames.compactMap { $0.userValue as? Int }
        #expect(order != Array(0..<samples.count))
        #expect(Set(order) == Set(0..<samples.count))
    }

    @Test(arguments: [PixelFormat.nv12, .bgra, .i420])
    func outputAttributesConvertAndScale(_ format: PixelFormat) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make("attrs", in: directory, codec: .h264, frames: 10)
        let samples = try TestStreams.samples(ofFile: path, codec: .h264)
        let native = try decodeAll(
            DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software), samples)
        let converted = try decodeAll(
            DecompressionSession(
                formatDescription: samples[0].formatDescription, decoder: .software,
                output: DecoderOutputAttributes(pixelFormat: format)), samples)
        #expect(converted.count == native.count)
        #expect(converted.allSatisfy { $0.pixelBuffer.format == format && $0.pixelBuffer.width == 320 })
        if format == .nv12 {
            // I420 → NV12 is a repacking: back to I420 it is identical.
            for (a, b) in zip(native, converted) {
                #expect(planarBytes(ofNV12: b.pixelBuffer) == a.pixelBuffer.packedBytes())
            }
        }
        let scaled = try decodeAll(
            DecompressionSession(
                formatDescription: samples[0].formatDescription, decoder: .software,
                output: DecoderOutputAttributes(pixelFormat: format, width: 160, height: 90)), samples)
        #expect(scaled.count == native.count)
        #expect(scaled.allSatisfy { $0.pixelBuffer.width == 160 && $0.pixelBuffer.height == 90 })
    }

    /// A 4:2:2 stream comes out as I422 unless another format is asked for.
    @Test func fourTwoTwoIsNativeOrConverted() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make(
            "422", in: directory, codec: .h264, frames: 5, pixelFormat: "yuv422p",
            encoderArgs: ["-profile:v", "high422"])
        let samples = try TestStreams.samples(ofFile: path, codec: .h264)
        let native = try decodeAll(
            DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software), samples)
        #expect(native.count == 5 && native.allSatisfy { $0.pixelBuffer.format == .i422 })
        let session = try DecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software,
            output: DecoderOutputAttributes(pixelFormat: .i420))
        let frames = try decodeAll(session, samples)
        #expect(frames.count == 5)
        #expect(frames.allSatisfy { $0.pixelBuffer.format == .i420 })
        // Luma passes through the 4:2:2 → 4:2:0 conversion untouched: it equals ffmpeg's.
        let expected = try ffmpegDecodeRaw(path: path, width: 320, height: 240, pixelFormat: "yuv420p")
        #expect(expected.count == frames.count)
        for (frame, reference) in zip(frames, expected) {
            let luma: [UInt8] = Array(frame.pixelBuffer.packedBytes().prefix(320 * 240))
            let referenceLuma: [UInt8] = Array(reference.prefix(320 * 240))
            #expect(luma == referenceLuma)
        }
    }

    @Test func flushDiscardsEverythingInFlight() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make("flush", in: directory, codec: .h264, encoderArgs: ["-bf", "3", "-g", "10"])
        let samples = try TestStreams.samples(ofFile: path, codec: .h264)
        let expected = try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p")
        let session = try DecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software, threadCount: 2)
        var before: [DecodedFrame] = []
        for sample in samples[0..<15] { before += try session.decode(sample, userValue: sample.pts) }
        let pendingAtFlush = session.statistics.pending
        #expect(pendingAtFlush > 0)
        session.flush()
        #expect(session.statistics.pending == 0)
        #expect(session.drops.count == pendingAtFlush)
        #expect(session.drops.allSatisfy { $0.reason.contains("flush") })
        // Seek to the keyframe at 20: 15...19 wait for it, then 20...29 decode.
        var after: [DecodedFrame] = []
        for sample in samples[15...] { after += try session.decode(sample, userValue: sample.pts) }
        after += try session.finish()
        let ptsBefore = Set(samples[0..<15].map(\.pts))
        #expect(after.allSatisfy { !ptsBefore.contains($0.pts) })
        #expect(after.count == 10)
        #expect(after.map { md5Hex($0.pixelBuffer) } == Array(expected[20...]))
        let statistics = session.statistics
        #expect(statistics.submitted == 30)
        #expect(statistics.decoded == before.count + 10)
        #expect(statistics.dropped == pendingAtFlush + 5)
        #expect(statistics.pending == 0)
    }

    /// Two streams of different sizes back to back: the session rebuilds its
    /// decoder and the first picture after the change has the new size.
    @Test(arguments: [CodecType.h264, .hevc])
    func resolutionChangeMidStream(_ codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try TestStreams.make("a", in: directory, codec: codec, frames: 12, encoderArgs: ["-bf", "2"])
        let second = try TestStreams.make(
            "b", in: directory, codec: codec, width: 176, height: 144, frames: 12, encoderArgs: ["-bf", "2"])
        let bytes =
            try [UInt8](Data(contentsOf: URL(fileURLWithPath: first)))
            + [UInt8](Data(contentsOf: URL(fileURLWithPath: second)))
        let samples = TestSupport.samples(assemble(bytes, codec: codec))
        #expect(samples.count == 24)
        let session = try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software)
        #expect(!session.canAccept(samples[12].formatDescription))
        #expect(session.canAccept(samples[0].formatDescription))
        let frames = try decodeAll(session, samples)
        let expected =
            try ffmpegFrameMD5(path: first, everyFrame: true, pixelFormat: "yuv420p")
            + ffmpegFrameMD5(path: second, everyFrame: true, pixelFormat: "yuv420p")
        #expect(frames.map { md5Hex($0.pixelBuffer) } == expected)
        #expect(frames[11].pixelBuffer.width == 320 && frames[12].pixelBuffer.width == 176)
        #expect(session.statistics == DecodeStatistics(submitted: 24, decoded: 24))
    }

    /// Damage in the middle of a group of pictures: that sample and the rest
    /// of its group are dropped with reasons, decoding resumes exactly at the
    /// next keyframe, and the counters add up.
    @Test(arguments: ["corrupted", "truncated"])
    func damagedSampleRecoversAtTheNextKeyframe(_ damage: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make(
            "damage", in: directory, codec: .h264, frames: 40,
            encoderArgs: ["-bf", "0", "-g", "10", "-sc_threshold", "0"])
        var samples = try TestStreams.samples(ofFile: path, codec: .h264)
        let expected = try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p")
        #expect(samples.map(\.isKeyframe).enumerated().filter { $0.element }.map(\.offset) == [0, 10, 20, 30])
        var data = samples[13].data
        if damage == "truncated" {
            data.removeLast(data.count * 2 / 3)
            // Keep the length prefix consistent with what remains, as a cut network packet would.
            let length = data.count - 4
            data.replaceSubrange(
                0..<4,
                with: [
                    UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff),
                ])
        } else {
            // Zeros where the slice header starts (after the length and the NAL header):
            // first_mb_in_slice becomes an exp-Golomb code far beyond the picture (H.264 7.3.3).
            for index in 5..<9 { data[index] = 0 }
        }
        samples[13].data = data
        let session = try DecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software, threadCount: 1)
        let frames = try decodeAll(session, samples)
        let byPts = Dictionary(uniqueKeysWithValues: frames.map { ($0.pts, md5Hex($0.pixelBuffer)) })
        // Everything before the damage and from the next keyframe on is exact.
        for index in Array(0..<13) + Array(20..<40) {
            #expect(byPts[samples[index].pts] == expected[index], "frame \(index)")
        }
        // And every picture output at all is exact: nothing that refers to the damaged one.
        let position = Dictionary(uniqueKeysWithValues: samples.enumerated().map { ($1.pts, $0) })
        for frame in frames {
            let index = try #require(position[frame.pts])
            #expect(md5Hex(frame.pixelBuffer) == expected[index], "frame \(index)")
        }
        let statistics = session.statistics
        #expect(statistics.submitted == 40)
        #expect(statistics.pending == 0)
        #expect(statistics.decoded + statistics.dropped == 40)
        #expect(statistics.dropped == session.drops.count)
        // The damaged sample and every later one of its group are dropped.
        let droppedPts = Set(session.drops.map(\.pts))
        #expect(droppedPts.isSuperset(of: samples[13..<20].map(\.pts)))
        #expect(droppedPts.isDisjoint(with: samples[20...].map(\.pts)))
        #expect(session.drops.allSatisfy { !$0.reason.isEmpty })
        #expect(statistics.decoded == 40 - droppedPts.count)
    }

    /// Samples lost in transport (a receiver saw a gap and said so with
    /// ``DecompressionSession/reportLoss(_:)``): the pictures already given
    /// come out at once, nothing comes out until the next keyframe, and every
    /// picture that does come out is FFmpeg's picture of the clean stream,
    /// bit for bit — B-frames and HEVC open GOPs (RASL pictures) included.
    @Test(arguments: [CodecType.h264, .hevc])
    func lostSamplesSkipToTheNextKeyframeAndEveryOutputIsExact(_ codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make(
            "loss", in: directory, codec: codec, frames: 40,
            encoderArgs: ["-bf", "2", "-g", "10"] + (codec == .h264 ? ["-sc_threshold", "0"] : []))
        let samples = try TestStreams.samples(ofFile: path, codec: codec)
        let expected = try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p")
        // The clean stream's picture for each sample, checked against FFmpeg.
        let clean = try decodeAll(
            try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software), samples)
        #expect(clean.map { md5Hex($0.pixelBuffer) } == expected)
        let reference = Dictionary(uniqueKeysWithValues: clean.map { ($0.pts, md5Hex($0.pixelBuffer)) })

        let lost = [13, 27]
        let session = try DecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software)
        var frames: [DecodedFrame] = []
        var outputAtLoss: [Int: Int] = [:]
        for (index, sample) in samples.enumerated() {
            if lost.contains(index) {
                frames += try session.reportLoss("sample \(index) lost in transport")
                outputAtLoss[index] = frames.count
                continue
            }
            frames += try session.decode(sample)
            let stats = session.statistics
            #expect(stats.submitted == stats.decoded + stats.dropped + stats.pending)
        }
        frames += try session.finish()

        // Every picture output is the clean stream's picture for its time, once.
        for frame in frames {
            #expect(reference[frame.pts] == md5Hex(frame.pixelBuffer), "picture at \(frame.pts)")
        }
        #expect(Set(frames.map(\.pts)).count == frames.count)
        // At each loss, every picture of the samples before it had come out.
        let keyframes = samples.indices.filter { samples[$0].isKeyframe }
        #expect(Set(samples[..<13].map(\.pts)).isSubset(of: Set(frames.prefix(outputAtLoss[13] ?? 0).map(\.pts))))
        var resumedAt: [MediaTime] = []
        var skipped: [MediaTime] = []
        for loss in lost {
            let next = try #require(keyframes.first { $0 > loss })
            resumedAt.append(samples[next].pts)
            skipped += samples[(loss + 1)..<next].map(\.pts)
        }
        // Between a loss and the next keyframe nothing is decoded; each is a drop with the reason.
        #expect(Set(frames.map(\.pts)).isDisjoint(with: skipped))
        let waiting = session.drops.filter { $0.kind == .waitingForKeyframe }
        #expect(waiting.map(\.pts) == skipped)
        #expect(waiting.allSatisfy { $0.reason.contains("lost in transport") })
        #expect(session.recoveries.map(\.pts) == resumedAt)
        let stats = session.statistics
        #expect(stats.submitted == samples.count - lost.count)
        #expect(stats.decoded == frames.count && stats.pending == 0)
        #expect(stats.dropped == session.drops.count)
        if codec == .h264 {
            // Closed groups: everything else decodes.
            #expect(frames.count == samples.count - lost.count - skipped.count)
        }
    }

    @Test func keyframelessStartWaitsForTheFirstKeyframe() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make(
            "nokey", in: directory, codec: .hevc, frames: 30, encoderArgs: ["-bf", "0", "-g", "10"])
        let samples = try TestStreams.samples(ofFile: path, codec: .hevc)
        let expected = try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p")
        let keyframes = samples.indices.filter { samples[$0].isKeyframe }
        #expect(keyframes.first == 0)
        let restart = try #require(keyframes.dropFirst().first)
        // Join mid-group: samples 3..<restart have no keyframe before them.
        let joined = Array(samples[3...])
        let session = try DecompressionSession(formatDescription: joined[0].formatDescription, decoder: .software)
        let frames = try decodeAll(session, joined)
        #expect(frames.map { md5Hex($0.pixelBuffer) } == Array(expected[restart...]))
        #expect(session.drops.map(\.pts) == samples[3..<restart].map(\.pts))
        #expect(session.drops.allSatisfy { $0.reason.contains("keyframe") })
        #expect(
            session.statistics
                == DecodeStatistics(submitted: joined.count, decoded: 30 - restart, dropped: restart - 3))
    }

    @Test func hardwareChoiceReportsWhyItIsUnavailable() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make("hw", in: directory, codec: .h264, frames: 3)
        let samples = try TestStreams.samples(ofFile: path, codec: .h264)
        do {
            let session = try DecompressionSession(
                formatDescription: samples[0].formatDescription, decoder: .vaapi(device: "/nonexistent/renderD1")
            )
            Issue.record("a missing device must not give a session (got \(session.backend))")
        } catch {
            #expect(error.code == .unavailable)
            #expect(error.message.contains("/nonexistent/renderD1"))
        }
        // Automatic falls back to software and says why when no device works.
        let automatic = try DecompressionSession(formatDescription: samples[0].formatDescription)
        if automatic.backend == "libavcodec" {
            let reason = try #require(automatic.fallbackReason)
            #expect(reason.contains("VA-API") && reason.contains("NVDEC"))
        }
        #expect(try decodeAll(automatic, samples).count == 3)
    }
}

/// The I420 packing of an NV12 picture (chroma de-interleaved).
private func planarBytes(ofNV12 buffer: PixelBuffer) -> [UInt8] {
    var luma: [UInt8] = []
    var u: [UInt8] = []
    var v: [UInt8] = []
    let packed = buffer.packedBytes()
    let lumaCount = buffer.width * buffer.height
    luma = Array(packed[0..<lumaCount])
    var index = lumaCount
    while index + 1 < packed.count {
        u.append(packed[index])
        v.append(packed[index + 1])
        index += 2
    }
    return luma + u + v
}

/// The asynchronous session takes reported losses in queue order: samples
/// lost in transport, reported with `reportLoss` between the samples that
/// arrived, give exactly the pictures the synchronous session gives for the
/// same calls (none between a loss and the next keyframe), each equal to
/// FFmpeg's picture of the clean stream.
@Test(arguments: [CodecType.h264, .hevc])
func theAsyncSessionTakesReportedLossesInOrder(_ codec: CodecType) async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try TestStreams.make(
        "async-loss", in: directory, codec: codec, frames: 40,
        encoderArgs: ["-bf", "2", "-g", "10"] + (codec == .h264 ? ["-sc_threshold", "0"] : []))
    let samples = try TestStreams.samples(ofFile: path, codec: codec)
    let expected = try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p")
    let reference = Dictionary(
        uniqueKeysWithValues: zip(
            try decodeAll(
                try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software), samples
            ).map(\.pts), expected))
    let lost: Set<Int> = [13, 27]

    let synchronous = try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software)
    var syncFrames: [DecodedFrame] = []
    for (index, sample) in samples.enumerated() {
        syncFrames += lost.contains(index) ? try synchronous.reportLoss("lost") : try synchronous.decode(sample)
    }
    syncFrames += try synchronous.finish()

    let asynchronous = try AsyncDecompressionSession(
        formatDescription: samples[0].formatDescription, decoder: .software, queueDepth: 4)
    let consumer = Task {
        var frames: [(MediaTime, String)] = []
        for try await frame in asynchronous.frames { frames.append((frame.pts, md5Hex(frame.pixelBuffer))) }
        return frames
    }
    for (index, sample) in samples.enumerated() {
        if lost.contains(index) {
            try await asynchronous.reportLoss("lost")
        } else {
            try await asynchronous.decode(sample)
        }
    }
    try await asynchronous.finish()
    let asyncFrames = try await consumer.value
    #expect(asyncFrames.map(\.0) == syncFrames.map(\.pts))
    #expect(asyncFrames.map(\.1) == syncFrames.map { md5Hex($0.pixelBuffer) })
    #expect(syncFrames.count < samples.count - lost.count, "the losses cost the pictures up to the next keyframe")
    for (pts, md5) in asyncFrames { #expect(reference[pts] == md5, "pts \(pts)") }
}

/// The public stream decoder takes Annex-B in chunks of any size (here 1 to
/// 997 bytes), finds the codec and the access units itself, and hands every
/// picture to its sink: FFmpeg's pictures of the file, in order.
@Test(arguments: [CodecType.h264, .hevc])
func theStreamDecoderTakesAnnexBInAnyChunks(_ codec: CodecType) throws {
    struct Collect: DecodedFrameSink {
        var md5s: [String] = []
        var dropped = 0
        mutating func assemblerDropped(_ nalUnitCount: Int, reason: String) { dropped += nalUnitCount }
        mutating func receive(_ frames: [DecodedFrame]) { md5s += frames.map { md5Hex($0.pixelBuffer) } }
    }
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try TestStreams.make("chunks", in: directory, codec: codec, frames: 24, encoderArgs: ["-bf", "2"])
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    var decoder = StreamDecoder(
        codec: nil, settings: StreamDecoderSettings(decoder: .software, output: .init(pixelFormat: .i420)),
        sink: Collect())
    var offset = 0
    var size = 1
    while offset < bytes.count {
        let end = min(bytes.count, offset + size)
        try decoder.append(bytes[offset..<end])
        offset = end
        size = size * 7 % 997 + 1
    }
    try decoder.finish()
    #expect(decoder.codec == codec)
    #expect(decoder.sink.dropped == 0)
    #expect(decoder.sink.md5s == (try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p")))
}

/// A long-running session's list of drops stays bounded: 9000 samples that
/// cannot be decoded (no keyframe came first) are all counted, the list
/// keeps the most recent ones (at least `maximumDropHistory`, at most twice
/// that), the last one among them.
@Test func theDropListIsBoundedAndTheTotalKept() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try TestStreams.make("bounded", in: directory, codec: .h264, frames: 4, encoderArgs: ["-bf", "0"])
    let samples = try TestStreams.samples(ofFile: path, codec: .h264)
    var predicted = try #require(samples.first { !$0.isKeyframe })
    let session = try DecompressionSession(formatDescription: predicted.formatDescription, decoder: .software)
    for index in 0..<9000 {
        predicted.pts = MediaTime(value: Int64(index), timescale: 30)
        predicted.dts = predicted.pts
        #expect(try session.decode(predicted).isEmpty)
    }
    #expect(session.statistics.dropped == 9000)
    #expect(session.statistics.submitted == 9000)
    let kept = session.drops.count
    #expect(kept >= DecompressionSession.maximumDropHistory && kept <= 2 * DecompressionSession.maximumDropHistory)
    #expect(session.drops.last?.pts == MediaTime(value: 8999, timescale: 30))
}
