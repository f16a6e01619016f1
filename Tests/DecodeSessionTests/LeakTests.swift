import DecodeSession
import FormatConv
import Foundation
import MediaCore
import NativeCodecs
import TestSupport
import Testing

/// No C object outlives its session, whatever happened to the stream. Other
/// suites may decode at the same time in this process, so the check waits
/// (bounded) for the counts to come back to zero instead of reading them once.
@Suite(.serialized) struct DecodeLeakTests {
    static let kinds: [LiveObjects.Kind] = [.libavcodecDecoder, .decodedPicture, .decoderHardwareDevice]

    private func expectNoLiveObjects() async throws {
        for _ in 0..<600 {
            if Self.kinds.allSatisfy({ LiveObjects.count($0) == 0 }) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("live objects left: \(Self.kinds.map { "\($0.rawValue)=\(LiveObjects.count($0))" })")
    }

    @Test func everythingIsReleasedAfterDamageFlushAndConversion() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make("leak", in: directory, codec: .h264, frames: 30, encoderArgs: ["-g", "10"])
        var samples = try TestStreams.samples(ofFile: path, codec: .h264)
        samples[4].data.removeLast(samples[4].data.count / 2)
        do {
            var held: [DecodedFrame] = []
            let session = try DecompressionSession(formatDescription: samples[0].formatDescription)
            for sample in samples[0..<15] { held += try session.decode(sample) }
            #expect(LiveObjects.count(.decodedPicture) > 0)  // zero-copy frames keep their AVFrames
            session.flush()
            held += try decodeAll(session, Array(samples[20...]))
            let converting = try DecompressionSession(
                formatDescription: samples[0].formatDescription, output: DecoderOutputAttributes(pixelFormat: .bgra))
            held += try decodeAll(converting, samples)
            #expect(!held.isEmpty)
            let stats = session.statistics
            #expect(stats.submitted == stats.decoded + stats.dropped + stats.pending)
        }
        do {
            let session = try AsyncDecompressionSession(formatDescription: samples[0].formatDescription)
            let consumer = Task { for try await _ in session.frames {} }
            for sample in samples { try await session.decode(sample) }
            try await session.finish()
            try await consumer.value
        }
        do {
            // A session abandoned with work queued and nobody consuming.
            let session = try AsyncDecompressionSession(formatDescription: samples[0].formatDescription, queueDepth: 2)
            for sample in samples[0..<3] { try await session.decode(sample) }
        }
        try await expectNoLiveObjects()
    }

    /// Pictures of 4:2:2, 4:4:4, monochrome and 12-bit streams are handed out
    /// without copying, like 4:2:0 ones: each held frame keeps its AVFrame
    /// (so at least as many are alive as frames are held), and all of them
    /// go when the frames do.
    @Test(arguments: [
        (CodecType.hevc, "yuv422p10le"), (.h264, "yuv444p"), (.hevc, "gray12le"), (.hevc, "yuv420p12le"),
    ])
    func otherFormatsAreAdoptedWithoutCopying(codec: CodecType, source: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make(
            "adopt", in: directory, codec: codec, width: 64, height: 64, frames: 4, pixelFormat: source)
        let samples = try TestStreams.samples(ofFile: path, codec: codec)
        do {
            let session = try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software)
            let held = try decodeAll(session, samples)
            #expect(held.count == 4)
            #expect(held.allSatisfy { $0.pixelBuffer.format.ffmpegName == source })
            #expect(LiveObjects.count(.decodedPicture) >= held.count)
        }
        try await expectNoLiveObjects()
    }
}
