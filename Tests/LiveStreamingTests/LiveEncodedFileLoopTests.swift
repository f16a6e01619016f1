import EncodeSession
import FormatConv
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import TestSupport
import Testing

/// An encoded file with B-frames, looped: each pass's times come after every
/// time of the pass before, decode times keep increasing, and the samples
/// are the file's own.
@Test func aLoopedFileWithBFramesKeepsItsTimesIncreasing() throws {
    let directory = try TemporaryDirectory()
    let clip = SyntheticClip(width: 160, height: 96, frameCount: 12, frameRate: 30)
    var properties = CompressionProperties()
    properties.maxBFrames = 2
    properties.maxKeyFrameInterval = 12
    let encoder = try CompressionSession(
        width: 160, height: 96, codec: .h264, encoder: .software, properties: properties)
    var samples: [CompressedSample] = []
    for index in 0..<clip.frameCount {
        samples += try encoder.encode(
            clip.frame(at: index), pts: clip.presentationTime(ofFrame: index),
            duration: MediaTime(value: 1, timescale: 30))
    }
    samples += try encoder.finish()
    #expect(samples.contains { $0.pts != $0.dts }, "the file has reordered frames")
    let path = try writeAnnexBFile(try annexBStream(samples), codec: .h264, in: directory)
    let file = try EncodedFile(path: path)

    let sink = RecordingSink(clock: FakeClock())
    let clock = sink.clock!
    let pipeline = try LivePipeline(
        source: .encodedFile(path: path, loop: true), sink: sink, configuration: .init(frameLimit: 36),
        now: { clock.now })
    try pipeline.run(until: { false })
    #expect(sink.samples.count == 36)
    #expect(pipeline.statistics.loops == 2)
    let passes = stride(from: 0, to: 36, by: 12).map { Array(sink.samples[$0..<$0 + 12]) }
    for (earlier, later) in zip(passes, passes.dropFirst()) {
        let earlierMax = earlier.map { max($0.pts, $0.dts) }.max()!
        let laterMin = later.map { min($0.pts, $0.dts) }.min()!
        #expect(earlierMax < laterMin, "\(earlierMax) then \(laterMin)")
    }
    let decodeTimes = sink.samples.map(\.dts)
    #expect(zip(decodeTimes, decodeTimes.dropFirst()).allSatisfy { $0 < $1 }, "\(decodeTimes)")
    for pass in passes {
        #expect(pass.map(\.data) == file.samples.map(\.data))
        #expect(zip(pass, file.samples).allSatisfy { $0.isKeyframe == $1.isKeyframe })
    }
}
