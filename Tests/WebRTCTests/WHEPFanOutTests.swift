// WHEP fan-out to many viewers on the loopback: twenty light viewers (their own SRTP keys, each packet's tag checked
// without decryption) count exactly the frames sent, and what the server gives each of them decrypts (libsrtp2) to
// the same payloads, which depacketize to the clip FFmpeg decodes.
import FormatConv
import Foundation
import MediaCore
import RTPPayload
import Synchronization
import TestSupport
import Testing

@testable import WebRTC

@Suite(.serialized)
struct WHEPFanOutTests {
    /// What the server thread reports: its HTTP port, then what it sent each viewer.
    final class ServerRun: Sendable {
        struct State {
            var port: Int?
            var sent: [Int]?
            /// From the server's statistics JSON after the stream: `accessUnitsPacketized`, and each viewer's
            /// `framesSent` and `framesTakenShared`.
            var packetized: Int?
            var framesSent: [Int]?
            var framesTakenShared: [Int]?
            /// Each viewer's packetizer settings (payload type, SSRC, first sequence number, timestamp offset).
            var packetizers: [RTPPacketizer.Configuration]?
            var failure: String?
        }
        let state = Mutex(State())

        func wait<T>(_ pick: (State) -> T?) throws -> T {
            let deadline = ContinuousClock.now + .seconds(120)
            while ContinuousClock.now < deadline {
                let state = state.withLock { $0 }
                if let failure = state.failure { throw ProcessError(failure) }
                if let value = pick(state) { return value }
                usleep(5000)
            }
            throw ProcessError("the server thread did not answer within 120 s")
        }
    }

    /// A Constrained Baseline clip from FFmpeg and its access units.
    static func clip(_ directory: TemporaryDirectory, frames: Int) throws -> (path: String, samples: [CompressedSample])
    {
        let path = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(path, size: "320x240", frames: frames, gop: 30)
        return (path, samples(assemble(Array(try Data(contentsOf: URL(fileURLWithPath: path))), codec: .h264)))
    }

    /// FFmpeg's count of the clip's packets (access units).
    static func ffprobePackets(_ path: String) throws -> Int {
        let text = String(
            decoding: try runChecked(
                "ffprobe",
                [
                    "-v", "error", "-count_packets", "-select_streams", "v:0", "-show_entries",
                    "stream=nb_read_packets", "-of", "csv=p=0", path,
                ]), as: UTF8.self)
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Serves `samples` to `count` viewers on a thread of its own: waits until all are connected, sends every
    /// sample (polling between them), ends the stream, and reports the RTP packets each viewer's sender sent.
    static func serve(_ samples: [CompressedSample], viewers count: Int, run: ServerRun) {
        Thread {
            do {
                var configuration = WHEPServer.Configuration()
                configuration.maximumViewers = count + 4
                configuration.limits.maximumPendingOffersPerAddress = count + 4
                configuration.limits.handshakeTimeout = 60
                let server = try WHEPServer(configuration)
                server.setLive(try VideoStreamFormat(samples[0].formatDescription))
                run.state.withLock { $0.port = server.httpPort }
                let deadline = ContinuousClock.now + .seconds(60)
                while server.connectedViewerCount < count {
                    guard ContinuousClock.now < deadline else { throw ProcessError("viewers did not connect") }
                    try server.poll(timeoutMilliseconds: 10)
                }
                for sample in samples {
                    server.send(sample)
                    try server.poll(timeoutMilliseconds: 10)
                }
                let sent = server.allViewers.map { $0.sender.statistics.packetsSent }
                let packetizers = server.allViewers.map { $0.sender.configuration.packetizer }
                let statistics =
                    try JSONSerialization.jsonObject(with: Data(server.statisticsJSON().utf8)) as? [String: Any]
                let viewers = statistics?["viewers"] as? [[String: Any]] ?? []
                server.endStream()
                for _ in 0..<50 { try server.poll(timeoutMilliseconds: 10) }
                server.close()
                run.state.withLock {
                    $0.packetized = statistics?["accessUnitsPacketized"] as? Int
                    $0.framesSent = viewers.compactMap { $0["framesSent"] as? Int }
                    $0.framesTakenShared = viewers.compactMap { $0["framesTakenShared"] as? Int }
                    $0.packetizers = packetizers
                    $0.sent = sent
                }
            } catch {
                run.state.withLock { $0.failure = "\(error)" }
            }
        }.start()
    }

    /// `count` viewers joined to a server of `samples`, pumped until the server ends every stream; their counts
    /// and the packets the server sent each.
    static func fanOut(_ samples: [CompressedSample], viewers count: Int, keep: Bool) throws -> (
        counts: [WHEPLoadViewers.Counts], sent: [Int]
    ) {
        let (counts, sent, _) = try fanOutRun(samples, viewers: count, keep: keep)
        return (counts, sent)
    }

    /// ``fanOut(_:viewers:keep:)`` with what the server thread reported.
    static func fanOutRun(_ samples: [CompressedSample], viewers count: Int, keep: Bool) throws -> (
        counts: [WHEPLoadViewers.Counts], sent: [Int], run: ServerRun.State
    ) {
        let run = ServerRun()
        serve(samples, viewers: count, run: run)
        let viewers = try WHEPLoadViewers(count: count)
        viewers.keepsPackets = keep
        try viewers.join(port: try run.wait(\.port))
        let deadline = ContinuousClock.now + .seconds(90)
        while viewers.endedCount < count, ContinuousClock.now < deadline { viewers.pump(timeoutMilliseconds: 10) }
        let sent = try run.wait(\.sent)
        return (viewers.counts, sent, run.state.withLock { $0 })
    }

    /// Twenty viewers with their own keys: every RTP packet each receives authenticates, each counts as many
    /// frames (marker bits) as FFmpeg counts access units in the clip, and as many packets as the server sent it.
    @Test func twentyViewersAuthenticateEveryPacketAndCountEveryFrame() throws {
        let directory = try TemporaryDirectory()
        let (path, samples) = try Self.clip(directory, frames: 60)
        let expectedFrames = try Self.ffprobePackets(path)
        #expect(expectedFrames == 60)
        let (counts, sent) = try Self.fanOut(samples, viewers: 20, keep: false)
        #expect(counts.count == 20 && sent.count == 20)
        #expect(counts.map(\.frames) == Array(repeating: expectedFrames, count: 20))
        #expect(counts.map(\.rejected) == Array(repeating: 0, count: 20))
        #expect(counts.map(\.ended) == Array(repeating: true, count: 20))
        #expect(counts.map(\.packets).sorted() == sent.sorted())
        #expect(Set(sent).count == 1 && sent[0] > expectedFrames, "\(sent)")
    }

    /// Each viewer's packets decrypt (with its own keys) to payloads equal byte for byte to every other viewer's
    /// and to those of a separate packetizer of the clip; one viewer's packets depacketize to access units FFmpeg
    /// decodes to the clip's own frames (framemd5).
    @Test func sharedPacketizationGivesEveryViewerTheSamePayloads() throws {
        let directory = try TemporaryDirectory()
        let (path, samples) = try Self.clip(directory, frames: 30)
        let (counts, _) = try Self.fanOut(samples, viewers: 5, keep: true)
        var packetizer = RTPPacketizer(
            configuration: .init(codec: .h264, payloadType: 96, ssrc: 1, maximumPayloadSize: 1100))
        var reference: [[UInt8]] = []
        for sample in samples {
            reference += try packetizer.packetize(sample).map { Array($0[try RTPHeader.parse($0).1]) }
        }
        for viewer in counts {
            // The stream's packets in order; the last packet sent again at the end is left out.
            let payloads = try viewer.kept.map { packet in Array(packet[try RTPHeader.parse(packet).1]) }
            #expect(payloads == reference)
        }
        var depacketizer = RTPDepacketizer(codec: .h264)
        var received: [CompressedSample] = []
        for packet in counts[0].kept {
            for case .sample(let sample) in depacketizer.receive(packet) { received.append(sample) }
        }
        for case .sample(let sample) in depacketizer.finish() { received.append(sample) }
        var writer = AnnexBWriter()
        var stream: [UInt8] = []
        for sample in received { stream += try writer.write(sample) }
        #expect(received.count == 30)
        #expect(try ffmpegFrameMD5(annexB: stream, codec: .h264, in: directory) == (try ffmpegFrameMD5(path: path)))
    }

    /// The access unit is packetized once however many viewers take it: with 1 and with 12 viewers the server's
    /// statistics count as many packetizations as FFmpeg counts access units in the clip, and every viewer's
    /// sender took every frame from that shared packetization. Each viewer's packets, decrypted with its own keys,
    /// are those of a packetizer of its own (its payload type, SSRC, first sequence number and timestamp offset):
    /// every header field and every payload byte, the header extensions aside.
    @Test(arguments: [1, 12]) func packetizesEachAccessUnitOnceForEveryViewer(viewers: Int) throws {
        let directory = try TemporaryDirectory()
        let (path, samples) = try Self.clip(directory, frames: 30)
        let accessUnits = try Self.ffprobePackets(path)
        #expect(accessUnits == 30)
        let (counts, _, run) = try Self.fanOutRun(samples, viewers: viewers, keep: true)
        #expect(run.packetized == accessUnits)
        #expect(run.framesSent == Array(repeating: accessUnits, count: viewers))
        #expect(run.framesTakenShared == Array(repeating: accessUnits, count: viewers))
        let packetizers = try #require(run.packetizers)
        #expect(counts.count == viewers && packetizers.count == viewers)
        #expect(Set(packetizers.map(\.ssrc)).count == viewers)
        for viewer in counts {
            let ssrc = try #require(viewer.kept.first.map { try RTPHeader.parse($0).0.ssrc })
            var packetizer = RTPPacketizer(configuration: try #require(packetizers.first { $0.ssrc == ssrc }))
            var reference: [[UInt8]] = []
            for sample in samples { reference += try packetizer.packetize(sample) }
            #expect(viewer.kept.count == reference.count)
            for (packet, expected) in zip(viewer.kept, reference) {
                let (header, payload) = try RTPHeader.parse(packet)
                let (referenceHeader, referencePayload) = try RTPHeader.parse(expected)
                #expect(header.payloadType == referenceHeader.payloadType)
                #expect(header.sequenceNumber == referenceHeader.sequenceNumber)
                #expect(header.timestamp == referenceHeader.timestamp)
                #expect(header.ssrc == referenceHeader.ssrc)
                #expect(header.marker == referenceHeader.marker)
                #expect(packet[payload] == expected[referencePayload])
            }
        }
    }
}
