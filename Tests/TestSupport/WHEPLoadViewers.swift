// Light WHEP viewers on the loopback for fan-out measurements and tests: each POSTs an offer, completes ICE and DTLS
// through a controlling WebRTCPeer, then only authenticates its SRTP (HMAC-SHA1-80 through OpenSSL, a replay window)
// and counts what came.
import FormatConv
import Foundation
import MediaCore
import RTPPayload
import WebRTC

#if canImport(Glibc)
    import Glibc
#endif

/// `count` viewers of one WHEP endpoint, driven from one thread by ``pump(timeoutMilliseconds:)``. Each has its own
/// loopback UDP socket and its own SRTP keys; RTP is authenticated (``SRTPInboundAuthenticator``: the tag and the
/// replay window, no decryption), then counted (packets, bytes, frames: packets with the marker bit, the last of each
/// access unit), and never depacketized; with ``keepsPackets`` the packets that count are also decrypted (libsrtp2). STUN, DTLS and
/// SRTCP go to the viewer's `WebRTCPeer` (consent checks, the server's sender reports and BYE).
public final class WHEPLoadViewers {
    /// What one viewer counted.
    public struct Counts: Sendable, Hashable, Codable {
        /// RTP packets that authenticated.
        public var packets = 0
        /// Their bytes as received (SRTP).
        public var bytes = 0
        /// Packets with the marker bit among them.
        public var frames = 0
        /// RTP datagrams whose authentication failed (or that came before the keys).
        public var rejected = 0
        /// RTP datagrams that authenticated but repeat a packet already taken (the replay check): the server
        /// sends its last packet once more when the stream ends.
        public var replayed = 0
        /// Whether the server ended the stream (RTCP BYE or close_notify).
        public var ended = false
        /// The decrypted packets, kept only when ``WHEPLoadViewers/keepsPackets`` is set.
        public var kept: [[UInt8]] = []

        /// Nothing counted yet.
        public init() {}

        /// Counts one SRTP datagram after `authenticator`'s check (nil: before the keys, rejected); `decrypt`,
        /// when given, turns a packet that counts into the one kept.
        package mutating func take(
            _ datagram: UnsafeRawBufferPointer, authenticator: SRTPInboundAuthenticator?,
            decrypt: (([UInt8]) throws -> [UInt8])? = nil
        ) {
            guard let authenticator else {
                rejected += 1
                return
            }
            switch authenticator.check(datagram) {
            case .authentic(let marker):
                packets += 1
                bytes += datagram.count
                if marker { frames += 1 }
                if let decrypt, let packet = try? decrypt(Array(datagram)) { kept.append(packet) }
            case .replayed: replayed += 1
            case .rejected, .malformed: rejected += 1
            }
        }
    }

    final class Viewer {
        let descriptor: Int32
        let address: UDPAddress
        let credentials = ICELiteAgent.randomCredentials()
        var peer: WebRTCPeer?
        var authenticator: SRTPInboundAuthenticator?
        var inbound: SRTPContext?
        var counts = Counts()
        init(descriptor: Int32, address: UDPAddress) {
            self.descriptor = descriptor
            self.address = address
        }
        deinit { close(descriptor) }
    }

    let viewers: [Viewer]
    let clock = RTPMonotonicClock()
    /// Keep every decrypted packet (for byte comparisons; off for measurements).
    public var keepsPackets = false
    private let batch = DatagramBatch()

    /// Opens `count` loopback UDP sockets (port 0, 4 MiB receive buffers asked for).
    public init(count: Int) throws {
        var made: [Viewer] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            guard fd >= 0 else { throw ProcessError("socket: errno \(errno)") }
            var size: Int32 = 4 << 20
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
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
            let viewer = Viewer(
                descriptor: fd, address: UDPAddress(host: [127, 0, 0, 1], port: UInt16(bigEndian: local.sin_port)))
            guard bound else { throw ProcessError("cannot bind a loopback UDP socket") }
            made.append(viewer)
        }
        viewers = made
    }

    /// A receive-only offer: H.264 in four profiles (constrained baseline, baseline, main, high; packetization mode
    /// 1, each with RTX) and H.265 Main, NACK and PLI, no header extensions.
    static func offer(_ credentials: (usernameFragment: String, password: String)) -> String {
        var lines = [
            "v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
            "m=video 9 UDP/TLS/RTP/SAVPF 96 97 98 99 100 101 102 103 104 105", "c=IN IP4 0.0.0.0",
            "a=ice-ufrag:\(credentials.usernameFragment)", "a=ice-pwd:\(credentials.password)",
            "a=fingerprint:sha-256 \(DTLSCertificate.shared.fingerprintText)", "a=setup:actpass", "a=mid:0",
            "a=recvonly", "a=rtcp-mux", "a=rtcp-rsize",
        ]
        for (index, profile) in ["42e01f", "42001f", "4d001f", "640028"].enumerated() {
            let type = 96 + 2 * index
            lines += [
                "a=rtpmap:\(type) H264/90000", "a=rtcp-fb:\(type) nack", "a=rtcp-fb:\(type) nack pli",
                "a=fmtp:\(type) level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=\(profile)",
                "a=rtpmap:\(type + 1) rtx/90000", "a=fmtp:\(type + 1) apt=\(type)",
            ]
        }
        lines += [
            "a=rtpmap:104 H265/90000", "a=rtcp-fb:104 nack", "a=rtcp-fb:104 nack pli",
            "a=fmtp:104 level-id=186;profile-id=1;tier-flag=0;tx-mode=SRST", "a=rtpmap:105 rtx/90000",
            "a=fmtp:105 apt=104",
        ]
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// POSTs each viewer's offer to `http://127.0.0.1:port/whep` (the server answers from another thread or
    /// process) and starts its ICE checks toward the answer's candidates. Throws on a status other than 201.
    public func join(port: Int, path: String = "/whep") throws {
        for viewer in viewers {
            let answerText = try Self.post(Self.offer(viewer.credentials), port: port, path: path)
            let answer = try SessionOffer(parsing: answerText, describing: "answer")
            let video = try NegotiatedVideo(receivingFrom: answer)
            var checks = ICECheckSchedule(
                localAddress: viewer.address, deadline: clock.now.seconds + 120, limits: .init(maximumChecks: 1000),
                broadcastAddresses: [])
            for section in answer.sections where section.kind == "video" {
                for candidate in section.candidates where candidate.host == "127.0.0.1" {
                    _ = checks.add(UDPAddress(host: [127, 0, 0, 1], port: UInt16(candidate.port)))
                }
            }
            viewer.peer = try WebRTCPeer(
                id: "viewer", video: video, credentials: viewer.credentials, ssrc: UInt32.random(in: 1...UInt32.max),
                ntpOffset: .zero, now: clock.now, controlling: .init(checks: checks, dtlsRole: .client))
            pump(timeoutMilliseconds: 0)
        }
    }

    /// One blocking HTTP/1.1 POST of an SDP offer on the loopback; the response body (the answer).
    static func post(_ offer: String, port: Int, path: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ProcessError("socket: errno \(errno)") }
        defer { close(fd) }
        var server = sockaddr_in()
        server.sin_family = sa_family_t(AF_INET)
        server.sin_addr.s_addr = inet_addr("127.0.0.1")
        server.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &server) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { throw ProcessError("connect to 127.0.0.1:\(port): errno \(errno)") }
        let body = Array(offer.utf8)
        let head =
            "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/sdp\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let request = Array(head.utf8) + body
        var written = 0
        while written < request.count {
            let count = request[written...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw ProcessError("send: errno \(errno)") }
            written += count
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += chunk[..<count]
            if let text = String(bytes: response, encoding: .utf8), let split = text.range(of: "\r\n\r\n"),
                let length = text[..<split.lowerBound].split(separator: "\r\n").first(where: {
                    $0.lowercased().hasPrefix("content-length:")
                }).flatMap({ Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }),
                text.utf8.count - text.utf8.distance(from: text.utf8.startIndex, to: split.upperBound) >= length
            {
                break
            }
        }
        let text = String(decoding: response, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 201"), let split = text.range(of: "\r\n\r\n") else {
            throw ProcessError("WHEP POST: \(text.split(separator: "\r\n").first ?? "no response")")
        }
        return String(text[split.upperBound...])
    }

    /// Viewers whose SRTP keys are in place.
    public var connectedCount: Int { viewers.filter { $0.authenticator != nil }.count }
    /// Viewers whose stream the server ended.
    public var endedCount: Int { viewers.filter { $0.counts.ended }.count }
    /// Each viewer's counts, in joining order.
    public var counts: [Counts] { viewers.map(\.counts) }

    /// Waits up to `timeoutMilliseconds` for datagrams, then reads every waiting one on every socket, runs each
    /// peer's timers and sends what they say.
    public func pump(timeoutMilliseconds: Int32) {
        var polls = viewers.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
        _ = poll(&polls, nfds_t(polls.count), timeoutMilliseconds)
        let now = clock.now
        for (index, viewer) in viewers.enumerated() {
            guard let peer = viewer.peer else { continue }
            var outputs: [WebRTCPeer.Output] = []
            if polls[index].revents & Int16(POLLIN) != 0 { outputs += read(viewer, peer: peer, at: now) }
            outputs += peer.poll(at: now)
            for case .send(let datagram, let destination) in outputs {
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = destination.port.bigEndian
                withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: destination.host.prefix(4)) }
                _ = datagram.withUnsafeBytes { bytes in
                    withUnsafePointer(to: &address) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            sendto(
                                viewer.descriptor, bytes.baseAddress, bytes.count, 0, $0,
                                socklen_t(MemoryLayout<sockaddr_in>.size))
                        }
                    }
                }
            }
            takeKeys(viewer, peer: peer)
            if peer.remoteEnded != nil || peer.isClosed { viewer.counts.ended = true }
        }
    }

    /// Every datagram waiting on the viewer's socket: SRTP authenticated and counted here, the rest to the peer.
    private func read(_ viewer: Viewer, peer: WebRTCPeer, at now: MediaTime) -> [WebRTCPeer.Output] {
        var outputs: [WebRTCPeer.Output] = []
        while true {
            let received = batch.receive(on: viewer.descriptor)
            for index in 0..<received {
                let datagram = batch.datagram(index)
                guard !datagram.isEmpty else { continue }
                // RTP (RFC 7983: first byte 128–191, and not RTCP's packet types 192–223 in the second).
                if datagram[0] >> 6 == 2, datagram.count < 2 || !(192...223).contains(datagram[1]) {
                    viewer.counts.take(
                        datagram, authenticator: viewer.authenticator,
                        decrypt: viewer.inbound.map { context in { try context.unprotectRTP($0) } })
                    continue
                }
                outputs += peer.receive(Array(datagram), from: batch.source(index), at: now)
                // The keys as soon as the handshake ends: the server's first media follows its last flight.
                takeKeys(viewer, peer: peer)
            }
            if received < DatagramBatch.capacity { break }
        }
        return outputs
    }

    /// The viewer's keys as soon as its handshake ends: the server's first media follows its last flight.
    private func takeKeys(_ viewer: Viewer, peer: WebRTCPeer) {
        guard viewer.authenticator == nil, peer.state == .connected, let keys = peer.keyingMaterial else { return }
        viewer.authenticator = try? SRTPInboundAuthenticator(keyAndSalt: keys.serverKeyAndSalt)
        if keepsPackets { viewer.inbound = try? SRTPContext(keyAndSalt: keys.serverKeyAndSalt, direction: .inbound) }
    }
}
