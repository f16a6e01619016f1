import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

/// MediaIO's `stopRequested` ends the waits inside libavformat: a receiver
/// listening for a publisher that never comes returns nil (no error) once
/// the stop is asked for, and a sender listening for a caller throws
/// `.cancelled`, both long before their 60 s timeouts.
@Suite struct StopRequestTests {
    /// A stop asked for `seconds` from now.
    static func stop(after seconds: Double) -> @Sendable () -> Bool {
        let due = Date().addingTimeInterval(seconds)
        return { Date() >= due }
    }

    @Test(arguments: ["srt", "rtsp", "rtmp", "udp"])
    func aListeningReceiverStopsOnRequest(_ scheme: String) throws {
        let url: String
        switch scheme {
        case "srt": url = "srt://127.0.0.1:\(try freePort(.udp))"
        case "udp": url = "udp://127.0.0.1:\(try freePort(.udp))"
        case "rtsp": url = "rtsp://127.0.0.1:\(try freePort(.tcp))/live"
        default: url = "rtmp://127.0.0.1:\(try freePort(.tcp))/live/s"
        }
        let receiver = try MediaStreamReceiver(
            url: url, options: StreamOptions(openTimeout: 60, ioTimeout: 60, listen: scheme != "udp"))
        receiver.stopRequested = Self.stop(after: 0.3)
        let started = Date()
        let event = try receiver.next()
        #expect(event == nil)
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test func anSRTListenerSenderThrowsCancelled() throws {
        let sent = try Sent(codec: "h264")
        let reader = try MovieReader(path: sent.encoded)
        let sample = try #require(try reader.nextSample())
        let sender = try MediaStreamSender(
            url: "srt://127.0.0.1:\(try freePort(.udp))", options: StreamOptions(openTimeout: 60, listen: true))
        sender.stopRequested = Self.stop(after: 0.3)
        let started = Date()
        var caught: MediaError? = nil
        do {
            _ = try sender.send(sample)
        } catch {
            caught = error
        }
        #expect(caught?.code == .cancelled, "\(String(describing: caught))")
        #expect(Date().timeIntervalSince(started) < 10)
    }
}
