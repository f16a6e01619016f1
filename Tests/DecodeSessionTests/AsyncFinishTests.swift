// AsyncDecompressionSession.finish(): drains, returns the dropped times, throws when finished twice.
import DecodeSession
import FormatConv
import MediaCore
import TestSupport
import Testing

@Suite struct AsyncFinishTests {
    /// Keyframes only, of 30 frames with a keyframe every 10: `finish()`
    /// returns once the session is drained, with the times of the 27 samples
    /// the filter dropped; the statistics add up at once; a second `finish()`
    /// throws `.invalidated`.
    @Test func finishDrainsAndReturnsTheDroppedTimes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make(
            "finish", in: directory, codec: .h264, frames: 30,
            encoderArgs: ["-bf", "0", "-g", "10", "-sc_threshold", "0"])
        let samples = try TestStreams.samples(ofFile: path, codec: .h264)
        #expect(samples.map(\.isKeyframe).enumerated().filter { $0.element }.map(\.offset) == [0, 10, 20])
        #expect(Set(samples.map(\.pts)).count == 30)
        let session = try AsyncDecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software, threadCount: 1)
        session.frameFilter = .keyframes
        let consumer = Task {
            var count = 0
            for try await _ in session.frames { count += 1 }
            return count
        }
        for sample in samples { try await session.decode(sample) }
        let dropped = try await session.finish()
        // Drained: the counts are final when finish() returns.
        #expect(session.statistics == DecodeStatistics(submitted: 30, decoded: 3, dropped: 27))
        #expect(dropped.count == 27)
        #expect(
            Set(dropped) == Set(samples.enumerated().filter { ![0, 10, 20].contains($0.offset) }.map(\.element.pts)))
        #expect(try await consumer.value == 3)
        await #expect {
            try await session.finish()
        } throws: { ($0 as? MediaError)?.code == .invalidated }
    }
}
