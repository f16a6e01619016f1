import DecodeSession
import EncodeSession
import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@Suite struct AsyncDecompressionSessionTests {
    /// Samples carry real presentation times (from the encoder's reordering),
    /// so "presentation order" is checkable: pts must increase.
    private static func reorderedSamples(_ directory: TemporaryDirectory) throws -> (String, [CompressedSample]) {
        let path = try TestStreams.make("async", in: directory, codec: .h264, frames: 30, encoderArgs: ["-bf", "3"])
        var samples = try TestStreams.samples(ofFile: path, codec: .h264)
        // Annex-B carries no timestamps: learn each sample's display position
        // from a synchronous decode (decode-order index in, display order out).
        let reference = try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software)
        var order: [Int] = []
        for (index, sample) in samples.enumerated() {
            order += try reference.decode(sample, userValue: index).compactMap { $0.userValue as? Int }
        }
        order += try reference.finish().compactMap { $0.userValue as? Int }
        for (position, index) in order.enumerated() {
            samples[index].pts = MediaTime(value: Int64(position), timescale: 30)
        }
        #expect(order != Array(0..<samples.count), "the stream must have reordering for this test to mean something")
        return (path, samples)
    }

    @Test func framesArriveInPresentationOrderWithBackPressure() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (path, samples) = try Self.reorderedSamples(directory)
        let expected = try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p")
        let session = try AsyncDecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software, queueDepth: 2)
        let consumer = Task {
            var frames: [DecodedFrame] = []
            for try await frame in session.frames {
                frames.append(frame)
            }
            return frames
        }
        for sample in samples { try await session.decode(sample, userValue: sample.pts) }
        try await session.finish()
        let frames = try await consumer.value
        #expect(frames.count == 30)
        #expect(frames.map { md5Hex($0.pixelBuffer) } == expected)
        let pts = frames.map(\.pts)
        #expect(pts == pts.sorted())
        #expect(frames.allSatisfy { ($0.userValue as? MediaTime) == $0.pts })
        #expect(session.statistics == DecodeStatistics(submitted: 30, decoded: 30))
        await #expect(throws: MediaError.self) { try await session.decode(samples[0]) }
    }

    @Test func flushDiscardsQueuedAndUndeliveredWork() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make("aflush", in: directory, codec: .h264, frames: 30, encoderArgs: ["-g", "10"])
        let samples = try TestStreams.samples(ofFile: path, codec: .h264)
        let expected = try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p")
        let session = try AsyncDecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software, queueDepth: 4)
        // No consumer yet: queues fill up to their capacity.
        for sample in samples[0..<6] { try await session.decode(sample) }
        await session.flush()
        let consumer = Task {
            var frames: [DecodedFrame] = []
            for try await frame in session.frames { frames.append(frame) }
            return frames
        }
        for sample in samples[10...] { try await session.decode(sample) }
        try await session.finish()
        let frames = try await consumer.value
        // Nothing from before the flush is delivered after it.
        let early = Set(samples[0..<6].map(\.pts))
        #expect(frames.allSatisfy { !early.contains($0.pts) })
        #expect(frames.map { md5Hex($0.pixelBuffer) } == Array(expected[10...]))
        let statistics = session.statistics
        #expect(statistics == DecodeStatistics(submitted: 26, decoded: 20, dropped: 6))
        #expect(session.drops.count == 6)
        #expect(session.drops.allSatisfy { $0.reason.contains("flush") })
    }

    /// What the synchronous session offers, on the asynchronous one:
    /// `frameFilter` (only the keyframes come out, exactly as ffmpeg decodes
    /// them) and `recoveries` after `reportLoss`.
    @Test func frameFilterAndRecoveriesAsOnTheSynchronousSession() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make(
            "aoptions", in: directory, codec: .h264, frames: 30,
            encoderArgs: ["-bf", "0", "-g", "10", "-sc_threshold", "0"])
        let samples = try TestStreams.samples(ofFile: path, codec: .h264)
        let expected = try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p")
        #expect(samples.map(\.isKeyframe).enumerated().filter { $0.element }.map(\.offset) == [0, 10, 20])
        func collect(_ session: AsyncDecompressionSession) -> Task<[DecodedFrame], any Error> {
            Task {
                var frames: [DecodedFrame] = []
                for try await frame in session.frames { frames.append(frame) }
                return frames
            }
        }

        let filtered = try AsyncDecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software, threadCount: 1)
        filtered.frameFilter = .keyframes
        #expect(filtered.frameFilter == .keyframes)
        let keyframes = collect(filtered)
        for sample in samples { try await filtered.decode(sample) }
        try await filtered.finish()
        #expect(try await keyframes.value.map { md5Hex($0.pixelBuffer) } == [expected[0], expected[10], expected[20]])
        #expect(filtered.statistics == DecodeStatistics(submitted: 30, decoded: 3, dropped: 27))
        #expect(filtered.drops.filter { $0.kind == .filtered }.count == 27)

        // Samples 13 and 14 never arrive: the loss is reported in their place.
        let lossy = try AsyncDecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software, threadCount: 1)
        let frames = collect(lossy)
        for sample in samples[0..<13] { try await lossy.decode(sample) }
        try await lossy.reportLoss("packets lost")
        for sample in samples[15...] { try await lossy.decode(sample) }
        try await lossy.finish()
        #expect(try await frames.value.map { md5Hex($0.pixelBuffer) } == Array(expected[0..<13] + expected[20...]))
        let recoveries = lossy.recoveries
        #expect(recoveries.count == 1)
        #expect(recoveries.first?.pts == samples[20].pts)
        // Samples 15 to 19 waited for the keyframe.
        #expect(recoveries.first?.droppedSamples == 5)
    }

    @Test func queueDepthIsCheckedLikeTheEncoder() throws {
        let encoder = try CompressionSession(width: 160, height: 120, codec: .h264, encoder: .software)
        #expect(throws: MediaError.invalidArgument("queueDepth 0: must be from 1 to 1024")) {
            try AsyncDecompressionSession(formatDescription: encoder.formatDescription, queueDepth: 0)
        }
    }

    @Test func invalidateEndsTheSequenceAndAccountsForEverySample() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make("ainvalidate", in: directory, codec: .h264, frames: 20)
        let samples = try TestStreams.samples(ofFile: path, codec: .h264)
        let session = try AsyncDecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software, queueDepth: 4)
        #expect(session.backendInUse == .software)
        for sample in samples[0..<6] { try await session.decode(sample) }
        await session.invalidate()
        var delivered = 0
        for try await _ in session.frames { delivered += 1 }
        await #expect {
            try await session.decode(samples[6])
        } throws: { ($0 as? MediaError)?.code == .invalidated }
        let statistics = session.statistics
        #expect(statistics.submitted == 6)
        #expect(statistics.pending == 0)
        #expect(statistics.decoded + statistics.dropped == 6)
        #expect(statistics.decoded == delivered)
        #expect(session.drops.allSatisfy { $0.reason.contains("invalidate()") }, "\(session.drops.map(\.reason))")
    }
}
