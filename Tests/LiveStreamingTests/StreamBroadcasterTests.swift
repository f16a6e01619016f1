// StreamBroadcaster over 127.0.0.1: what its TCP clients receive (decoded by
// ffmpeg) and what it logs through CodecLog.
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import Sockets
import Synchronization
import TestSupport
import Testing

@Suite struct StreamBroadcasterTests {
    /// Collects the broadcaster's messages.
    final class Messages: Sendable {
        private let lines = Mutex<[LogMessage]>([])
        var all: [LogMessage] { lines.withLock { $0 } }
        var handler: CodecLog.Handler {
            { message in
                if message.subsystem == StreamBroadcaster.logSubsystem { self.lines.withLock { $0.append(message) } }
            }
        }
    }

    @Test func everyClientGetsEveryFrameOfALivePipeline() throws {
        let directory = try TemporaryDirectory()
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        let broadcaster = StreamBroadcaster(listener: listener, maximumQueuedBytes: 4 << 20)
        let clients = try (0..<2).map { _ in
            try TCPConnection.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        }
        let messages = Messages()
        try CodecLog.withHandler(messages.handler) { () throws(MediaError) in
            for _ in 0..<100 where broadcaster.clientCount < 2 {
                try broadcaster.acceptPending(timeoutMilliseconds: 50)
            }
            #expect(broadcaster.clientCount == 2)
            let pipeline = try LivePipeline(
                source: .frames(framesPerSecond: 30), sink: broadcaster, configuration: .init(pacing: false))
            let clip = SyntheticClip(width: 160, height: 96, frameCount: 12, frameRate: 30)
            for index in 0..<clip.frameCount {
                pipeline.push(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
            }
            pipeline.endOfFrames()
            try pipeline.run(until: { false })
            broadcaster.closeAll()
        }
        #expect(broadcaster.clientCount == 0)
        var streams: [[UInt8]] = []
        for (index, client) in clients.enumerated() {
            let bytes = try client.readAll()
            client.close()
            let path = directory.path("client\(index).h264")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(try ffmpegFrameMD5(path: path, everyFrame: true).count == 12)
            streams.append(bytes)
        }
        #expect(streams[0] == streams[1])
        let lines = messages.all.map(\.message)
        #expect(lines.filter { $0.hasSuffix("connected; it starts at the next keyframe") }.count == 2)
        #expect(lines.filter { $0.hasSuffix("sent 12 access units, \(streams[0].count) bytes") }.count == 2)
        #expect(messages.all.allSatisfy { $0.level == .info })
    }

    @Test func aClientPastTheLimitIsRefusedAndLogged() throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        let broadcaster = StreamBroadcaster(listener: listener, maximumClients: 1)
        let first = try TCPConnection.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        let second = try TCPConnection.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        defer {
            first.close()
            second.close()
        }
        let messages = Messages()
        try CodecLog.withHandler(messages.handler) { () throws(MediaError) in
            for _ in 0..<100 where broadcaster.clientCount + broadcaster.refusedClients < 2 {
                try broadcaster.acceptPending(timeoutMilliseconds: 50)
            }
            broadcaster.closeAll()
        }
        #expect(broadcaster.refusedClients == 1)
        // Both connections end with no bytes: one refused, one closed before any keyframe.
        #expect(try first.readAll() == [])
        #expect(try second.readAll() == [])
        let refusals = messages.all.filter {
            $0.message.hasSuffix(" refused: 1 clients connected already (maximumClients)")
        }
        #expect(refusals.count == 1)
        #expect(refusals.first?.level == .warning)
    }
}
