// Reconnections logged through CodecLog: one message per attempt.
import FormatConv
import Foundation
import MediaCore
import MediaIO
import Synchronization
import TestSupport
import Testing

@Suite struct ReconnectLogTests {
    /// A sender to a loopback RTMP port where nothing listens, allowed two
    /// reconnections (the fake sleep waits nothing): each attempt is logged
    /// once at `.warning` under "mediaio.reconnect", with the wait and the
    /// attempt in the text the CLI prints, then the error comes out.
    @Test func aRefusedSenderLogsEachAttempt() throws {
        let port = try freePort(.tcp)
        let sender = try MediaStreamSender(
            url: "rtmp://127.0.0.1:\(port)/live/s", options: StreamOptions(openTimeout: 2, ioTimeout: 2),
            reconnect: ReconnectPolicy(maximumAttempts: 2), sleep: { _ in })
        let sample = try Self.keyframe()
        let logged = Mutex<[LogMessage]>([])
        let thrown = CodecLog.withHandler({ message in logged.withLock { $0.append(message) } }) {
            () -> MediaError? in
            do throws(MediaError) {
                _ = try sender.send(sample)
                return nil
            } catch { return error }
        }
        let messages = logged.withLock { $0 }.filter { $0.subsystem == "mediaio.reconnect" }
        let error = try #require(thrown)
        #expect(messages.count == 2, "\(messages)")
        #expect(messages.allSatisfy { $0.level == .warning })
        #expect(
            messages.map(\.message) == [
                "\(error.message); reconnecting in 0.5 s (attempt 1 of 2)",
                "\(error.message); reconnecting in 1.0 s (attempt 2 of 2)",
            ])
        #expect(sender.reconnections == 2)
    }

    /// With a policy of one attempt, one message.
    @Test func oneAttemptIsLoggedOnce() throws {
        let port = try freePort(.tcp)
        let sender = try MediaStreamSender(
            url: "rtmp://127.0.0.1:\(port)/live/s", options: StreamOptions(openTimeout: 2, ioTimeout: 2),
            reconnect: ReconnectPolicy(maximumAttempts: 1), sleep: { _ in })
        let sample = try Self.keyframe()
        let logged = Mutex<[LogMessage]>([])
        CodecLog.withHandler({ message in logged.withLock { $0.append(message) } }) {
            #expect(throws: MediaError.self) { try sender.send(sample) }
        }
        let messages = logged.withLock { $0 }.filter { $0.subsystem == "mediaio.reconnect" }
        #expect(messages.count == 1, "\(messages)")
        #expect(messages.first?.message.hasSuffix("; reconnecting in 0.5 s (attempt 1 of 1)") == true)
    }

    /// A receiver of a loopback RTMP URL where nothing listens, allowed two
    /// reconnections: each attempt is logged once, as the sender's are.
    @Test func aRefusedReceiverLogsEachAttempt() throws {
        let port = try freePort(.tcp)
        let receiver = try MediaStreamReceiver(
            url: "rtmp://127.0.0.1:\(port)/live/s", options: StreamOptions(openTimeout: 2, ioTimeout: 2),
            reconnect: ReconnectPolicy(maximumAttempts: 2), sleep: { _ in })
        let logged = Mutex<[LogMessage]>([])
        CodecLog.withHandler({ message in logged.withLock { $0.append(message) } }) {
            #expect(throws: MediaError.self) { _ = try receiver.next() }
        }
        let messages = logged.withLock { $0 }.filter { $0.subsystem == "mediaio.reconnect" }
        #expect(messages.count == 2, "\(messages)")
        #expect(messages.allSatisfy { $0.level == .warning })
        #expect(messages.first?.message.hasSuffix("; reconnecting in 0.5 s (attempt 1 of 2)") == true)
        #expect(messages.last?.message.hasSuffix("; reconnecting in 1.0 s (attempt 2 of 2)") == true)
        #expect(receiver.reconnections == 2)
    }

    /// The first sample (a keyframe) of a short H.264 clip made by FFmpeg.
    static func keyframe() throws -> CompressedSample {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("clip.mp4")
        try ffmpegTestPattern(
            size: "160x120", rate: 30, frames: 2, arguments: ["-c:v", "libx264", "-bf", "0"], to: path)
        let reader = try MovieReader(path: path)
        return try #require(try reader.nextSample())
    }
}
