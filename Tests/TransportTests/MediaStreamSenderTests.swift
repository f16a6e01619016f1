import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

/// MediaIO's reconnect policy and the URL-chosen sender, on a fake clock:
/// the waits are recorded, never slept.
struct ReconnectPolicyTests {
    /// 0.5 s, then doubling, at most 8 s; counted attempts, then nil.
    @Test func backOffDoublesUpToItsCeiling() {
        var reconnector = Reconnector(policy: ReconnectPolicy(maximumAttempts: 7))
        let refused = MediaError(.connectionFailed, "refused")
        let waits = (0..<8).map { _ in reconnector.delay(after: refused) }
        #expect(waits == [0.5, 1, 2, 4, 8, 8, 8, nil])
        #expect(reconnector.attempts == 7)
        let custom = ReconnectPolicy(maximumAttempts: 3, initialDelay: 0.1, maximumDelay: 0.25, multiplier: 3)
        #expect((1...3).map(custom.delay(beforeAttempt:)) == [0.1, 0.25, 0.25])
    }

    /// Only what a new connection can cure is retried.
    @Test func onlyConnectionErrorsAreRetried() {
        var reconnector = Reconnector(policy: ReconnectPolicy(maximumAttempts: 5))
        #expect(reconnector.delay(after: MediaError(.invalidData, "garbage")) == nil)
        #expect(reconnector.delay(after: MediaError(.unsupported, "HEVC in FLV")) == nil)
        #expect(reconnector.attempts == 0)
        #expect(reconnector.delay(after: MediaError(.timedOut, "silent")) == 0.5)
        #expect(Reconnector(policy: .never).attempts == 0)
        var never = Reconnector(policy: .never)
        #expect(never.delay(after: MediaError(.connectionFailed, "refused")) == nil)
    }

    /// A sender to an RTMP port where nothing listens: each refused
    /// connection is retried after the policy's wait (recorded by the fake
    /// sleep, and announced to `willReconnect`), then the error comes out.
    @Test func aRefusedPublisherBacksOffThenFails() throws {
        let port = try freePort(.tcp)
        var waits: [Double] = []
        let sender = try MediaStreamSender(
            url: "rtmp://127.0.0.1:\(port)/live/s", options: StreamOptions(openTimeout: 2, ioTimeout: 2),
            reconnect: ReconnectPolicy(maximumAttempts: 4), sleep: { waits.append($0) })
        var announced: [Int] = []
        sender.willReconnect = { _, _, attempt in announced.append(attempt) }
        let samples = try testSamples()
        #expect(throws: MediaError.self) { try sender.send(samples[0]) }
        #expect(waits == [0.5, 1, 2, 4])
        #expect(announced == [1, 2, 3, 4])
        #expect(sender.reconnections == 4)
        #expect(sender.samplesSent == 0)
    }

    /// Samples before the first keyframe are left out and counted; a URL
    /// no transport takes is refused before anything is opened.
    @Test func theStreamStartsAtAKeyframeAndURLsAreChecked() throws {
        #expect(throws: MediaError.self) { try MediaStreamSender(url: "gopher://127.0.0.1:70") }
        let port = try freePort(.udp)
        let sender = try MediaStreamSender(url: "udp://127.0.0.1:\(port)")
        #expect(sender.transport == .udp)
        let samples = try testSamples()
        #expect(samples[0].isKeyframe && samples[30].isKeyframe && !samples[1...3].contains { $0.isKeyframe })
        for sample in samples[1...3] { _ = try sender.send(sample) }
        #expect(sender.samplesSent == 0 && sender.skippedBeforeFirstKeyframe == 3)
        _ = try sender.send(samples[30])
        #expect(sender.samplesSent == 1)
        try sender.finish()
    }

    /// An H.264 clip of 45 frames, a keyframe every 30, as samples.
    private func testSamples() throws -> [CompressedSample] {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("clip.mp4")
        try ffmpegTestPattern(
            size: "160x120", rate: 30, frames: 45, arguments: ["-c:v", "libx264", "-g", "30", "-bf", "0"], to: path)
        let reader = try MovieReader(path: path)
        var samples: [CompressedSample] = []
        while let sample = try reader.nextSample() { samples.append(sample) }
        return samples
    }
}
