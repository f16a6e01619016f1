// HEVC over WebRTC end to end in process: an x265 clip (FFmpeg's libx265)
// published by WHIPClient to WHIPEndpoint, and served by WHEPServer to a
// viewer (a receiving controlling WebRTCPeer); the access units that arrive
// decode, with FFmpeg, to the clip's own frames.
import FormatConv
import Foundation
import MediaCore
import RTPPayload
import TestSupport
import Testing

@testable import WebRTC

#if canImport(Glibc)
    import Glibc
#endif

/// A WHEP viewer in process: a controlling, receiving ``WebRTCPeer`` (ICE
/// checks to the answer's candidate, DTLS client, SRTP in, feedback out) on
/// a loopback UDP socket of its own.
final class HEVCViewer {
    let descriptor: Int32
    let address: UDPAddress
    let credentials = ICELiteAgent.randomCredentials()
    let clock = RTPMonotonicClock()
    private(set) var peer: WebRTCPeer?
    private(set) var samples: [CompressedSample] = []

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        descriptor = fd
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        address = UDPAddress(host: [127, 0, 0, 1], port: UInt16(bigEndian: local.sin_port))
        guard bound else { throw ProcessError("cannot bind a loopback UDP socket") }
    }

    deinit { close(descriptor) }

    /// The Chrome-shaped receive-only offer with our credentials and certificate.
    var offer: String {
        HEVCOffers.chrome()
            .replacingOccurrences(of: "a=ice-ufrag:Hx4f", with: "a=ice-ufrag:\(credentials.usernameFragment)")
            .replacingOccurrences(
                of: "a=ice-pwd:q9ZkU2m1LxJ4rN0vPb7YcT3e", with: "a=ice-pwd:\(credentials.password)"
            )
            .replacingOccurrences(of: Offers.fingerprint, with: "sha-256 " + DTLSCertificate.shared.fingerprintText)
    }

    /// Reads the server's answer and starts ICE toward its candidate.
    func accept(answer text: String) throws {
        let answer = try SessionOffer(parsing: text, describing: "answer")
        let section = try #require(answer.sections.first { $0.kind == "video" && $0.port != 0 })
        let payloadType = try #require(section.formats.first.flatMap { Int($0) })
        let name = try #require(section.rtpmaps[payloadType]?.name)
        let video = NegotiatedVideo(
            sectionIndex: 0, mid: section.mid ?? "0", payloadType: UInt8(payloadType),
            retransmissionPayloadType: section.formats.dropFirst().first.flatMap { UInt8($0) },
            offeredProfileLevelID: "",
            nack: true, pictureLossIndication: true, fullIntraRequest: true, reducedSizeRTCP: true, playoutDelayID: nil,
            absoluteCaptureTimeID: nil, remoteUsernameFragment: try #require(answer.usernameFragment(section)),
            remotePassword: try #require(answer.password(section)),
            remoteFingerprint: try #require(answer.fingerprint(section)).value, isIncoming: true,
            transportSequenceNumberID: 3, codec: name == "H265" ? .hevc : .h264)
        var checks = ICECheckSchedule(
            localAddress: address, deadline: clock.now.seconds + 60, limits: .init(), broadcastAddresses: [])
        for candidate in section.candidates {
            _ = checks.add(UDPAddress(host: [127, 0, 0, 1], port: UInt16(candidate.port)))
        }
        peer = try WebRTCPeer(
            id: "viewer", video: video, credentials: credentials, ssrc: 0x5151_5151, ntpOffset: .zero,
            now: clock.now, controlling: .init(checks: checks, dtlsRole: .client))
    }

    /// Hands waiting datagrams to the peer, runs its timers, sends what it says, keeps the access units.
    func pump() {
        guard let peer else { return }
        var buffer = [UInt8](repeating: 0, count: 2048)
        var outputs: [WebRTCPeer.Output] = []
        while let (datagram, source) = receiveUDPDatagram(on: descriptor, into: &buffer) {
            outputs += peer.receive(datagram, from: source, at: clock.now)
        }
        outputs += peer.poll(at: clock.now)
        for case .send(let datagram, let destination) in outputs {
            sendUDPDatagram(datagram, to: destination, on: descriptor)
        }
        samples += peer.takeSamples()
    }

    var isConnected: Bool { peer?.state == .connected }
}

@Suite(.serialized)
struct HEVCMediaTests {
    /// FFmpeg's test pattern as HEVC Main (libx265, no B-frames, a keyframe
    /// every `gop` frames) at `path`.
    static func hevcClip(_ path: String, frames: Int, gop: Int) throws {
        try ffmpegTestPattern(
            size: "176x144", rate: 25, frames: frames,
            arguments: [
                "-c:v", "libx265", "-pix_fmt", "yuv420p", "-preset", "ultrafast",
                "-x265-params", "keyint=\(gop):min-keyint=\(gop):bframes=0:log-level=error",
            ], to: path)
    }

    /// The access units of the Annex-B file at `path`.
    static func accessUnits(_ path: String) throws -> [CompressedSample] {
        samples(assemble(Array(try Data(contentsOf: URL(fileURLWithPath: path))), codec: .hevc))
    }

    /// `samples` as one Annex-B stream (parameter sets before keyframes).
    static func annexB(_ samples: [CompressedSample]) throws -> [UInt8] {
        var writer = AnnexBWriter()
        var bytes: [UInt8] = []
        for sample in samples { bytes += try writer.write(sample) }
        return bytes
    }

    /// The clip's format read from its SPS is what ffprobe reports: profile
    /// Main (general_profile_idc 1) and its general_level_idc.
    static func checkFormat(_ format: VideoStreamFormat, of path: String) throws {
        let probe = String(
            decoding: try runChecked(
                "ffprobe",
                [
                    "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=profile,level", "-of", "csv=p=0",
                    path,
                ]),
            as: UTF8.self
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        let fields = probe.split(separator: ",")
        #expect(fields.first == "Main", "\(probe)")
        guard case .hevc(let profile, let tier, let level) = format else {
            Issue.record("not HEVC: \(format)")
            return
        }
        #expect(profile == 1 && tier == 0 && fields.count == 2 && String(level) == fields[1], "\(probe) \(format)")
    }

    /// WHIPClient publishes the x265 clip to WHIPEndpoint: the offer and
    /// answer agree on H.265, every access unit arrives, and FFmpeg decodes
    /// what arrived to the clip's own frames (framemd5).
    @Test func whipPublishesHEVCBitExact() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.hevc")
        try Self.hevcClip(clip, frames: 40, gop: 10)
        let sent = try Self.accessUnits(clip)
        #expect(sent.count == 40)
        let format = try VideoStreamFormat(sent[0].formatDescription)
        try Self.checkFormat(format, of: clip)
        var configuration = WHIPEndpoint.Configuration(path: "/live")
        configuration.handshakeTimeout = 60
        let endpoint = try WHIPEndpoint(configuration)
        let port = endpoint.httpPort
        let outcome = PublisherOutcome()
        Thread {
            outcome.set(
                Result { () throws(MediaError) -> WHIPClient.Ending in
                    let client = try WHIPClient(url: "http://127.0.0.1:\(port)/live", format: format)
                    try client.connect(timeoutSeconds: 60)
                    for sample in sent {
                        try client.send(sample)
                        try client.poll(timeoutMilliseconds: 5)
                    }
                    client.endStream()
                    for _ in 0..<40 { try client.poll(timeoutMilliseconds: 5) }
                    return try client.finish()
                })
        }.start()
        let deadline = ContinuousClock.now + .seconds(90)
        var received: [CompressedSample] = []
        while let sample = try endpoint.nextSample(
            firstPublisherWithin: .seconds(60), stopRequested: { ContinuousClock.now > deadline })
        {
            received.append(sample)
        }
        // The publisher's DELETE comes after its BYE: the endpoint answers it.
        let ending = try outcome.wait { try? endpoint.poll(timeoutMilliseconds: 10) }
        endpoint.close()
        // 404 when the endpoint had already ended the session at the BYE.
        #expect([.deleted(status: 200), .deleted(status: 404)].contains(try ending.get()))
        #expect(received.count == sent.count)
        #expect(received.map(\.formatDescription.codec) == Array(repeating: .hevc, count: sent.count))
        let reference = try ffmpegFrameMD5(path: clip)
        #expect(reference.count == 40)
        #expect(try ffmpegFrameMD5(annexB: try Self.annexB(received), codec: .hevc, in: directory) == reference)
    }

    /// WHEPServer serves the x265 clip to a viewer whose offer has H.264
    /// and H.265: the answer takes H.265, every access unit arrives
    /// (packetized as RFC 7798 APs and FUs), and FFmpeg decodes it to the
    /// clip's own frames; also with 5 % of first transmissions dropped on
    /// purpose (seeded), repaired by the viewer's NACKs and the server's RTX.
    @Test(arguments: [0.0, 0.05])
    func whepServesHEVCBitExact(loss: Double) throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.hevc")
        try Self.hevcClip(clip, frames: 40, gop: 10)
        let sent = try Self.accessUnits(clip)
        var configuration = WHEPServer.Configuration()
        configuration.lossProbability = loss
        configuration.lossSeed = 7
        let server = try WHEPServer(configuration)
        server.setLive(try VideoStreamFormat(sent[0].formatDescription))
        let viewer = try HEVCViewer()
        let response = try WHEPServerTests.exchange(server, WHEPServerTests.post(viewer.offer))
        #expect(response.status == 201, "\(response.body)")
        try viewer.accept(answer: response.body)
        #expect(viewer.peer?.video.codec == .hevc)
        let deadline = ContinuousClock.now + .seconds(60)
        while !(viewer.isConnected && server.connectedViewerCount == 1), ContinuousClock.now < deadline {
            try server.poll(timeoutMilliseconds: 2)
            viewer.pump()
        }
        #expect(viewer.isConnected && server.connectedViewerCount == 1)
        for sample in sent {
            server.send(sample)
            for _ in 0..<3 {
                try server.poll(timeoutMilliseconds: 1)
                viewer.pump()
            }
        }
        server.endStream()
        while viewer.samples.count < sent.count, ContinuousClock.now < deadline {
            try server.poll(timeoutMilliseconds: 2)
            viewer.pump()
        }
        server.close()
        let served = try #require(server.allViewers.first)
        #expect(served.sender.statistics.framesSent == sent.count)
        if loss > 0 {
            #expect(served.packetsDroppedOnPurpose > 0)
            #expect(served.sender.statistics.retransmittedPacketsSent >= served.packetsDroppedOnPurpose)
        }
        #expect(viewer.samples.count == sent.count, "\(viewer.peer.map { "\($0.state) \($0.refusals)" } ?? "")")
        #expect(viewer.peer?.lossEvents == 0)
        let reference = try ffmpegFrameMD5(path: clip)
        #expect(try ffmpegFrameMD5(annexB: try Self.annexB(viewer.samples), codec: .hevc, in: directory) == reference)
    }
}

/// A publisher thread's result, read by the test once the thread set it.
final class PublisherOutcome: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<WHIPClient.Ending, MediaError>?

    func set(_ result: Result<WHIPClient.Ending, MediaError>) { lock.withLock { self.result = result } }

    /// The result, running `step` (which waits a little) until it came, at most about 60 s.
    func wait(step: () -> Void) throws -> Result<WHIPClient.Ending, MediaError> {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let result = lock.withLock({ result }) { return result }
            step()
        }
        throw ProcessError("the publisher did not finish within 60 s")
    }
}
