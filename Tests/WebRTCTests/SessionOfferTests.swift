import MediaCore
import Testing

@testable import WebRTC

/// Offers shaped like a browser's receive-only WHEP offer: an audio and a
/// video section, BUNDLE, VP8 first, then H.264 in three profiles with RTX.
enum Offers {
    static let fingerprint =
        "sha-256 5C:9F:2B:7E:80:11:A3:44:D0:1E:6B:92:C7:3A:F0:15:08:77:EE:61:2D:BB:94:CE:03:6F:71:A8:19:E4:55:C2"

    static func browser(
        fingerprintLine: String? = "a=fingerprint:" + fingerprint, setup: String = "actpass",
        h264: Bool = true, rtcpMux: Bool = true, direction: String = "recvonly"
    ) -> String {
        var lines = [
            "v=0", "o=- 4611731400430051336 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0 1",
            "a=extmap-allow-mixed", "a=msid-semantic: WMS",
            "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0",
            "a=ice-ufrag:Hx4f", "a=ice-pwd:q9ZkU2m1LxJ4rN0vPb7YcT3e", "a=ice-options:trickle",
        ]
        if let fingerprintLine { lines.append(fingerprintLine) }
        lines += [
            "a=setup:\(setup)", "a=mid:0", "a=recvonly", "a=rtcp-mux", "a=rtpmap:111 opus/48000/2",
            "m=video 9 UDP/TLS/RTP/SAVPF 96 97 102 103 106 107 112 113", "c=IN IP4 0.0.0.0",
            "a=ice-ufrag:Hx4f", "a=ice-pwd:q9ZkU2m1LxJ4rN0vPb7YcT3e",
        ]
        if let fingerprintLine { lines.append(fingerprintLine) }
        lines += [
            "a=setup:\(setup)", "a=mid:1", "a=extmap:1 urn:ietf:params:rtp-hdrext:toffset",
            "a=extmap:6 http://www.webrtc.org/experiments/rtp-hdrext/playout-delay",
            "a=extmap:15 http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time",
            "a=\(direction)",
        ]
        if rtcpMux { lines.append("a=rtcp-mux") }
        lines += [
            "a=rtcp-rsize", "a=rtpmap:96 VP8/90000", "a=rtcp-fb:96 nack", "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96",
        ]
        if h264 {
            lines += [
                "a=rtpmap:102 H264/90000", "a=rtcp-fb:102 goog-remb", "a=rtcp-fb:102 nack", "a=rtcp-fb:102 nack pli",
                "a=rtcp-fb:102 ccm fir",
                "a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f",
                "a=rtpmap:103 rtx/90000", "a=fmtp:103 apt=102", "a=rtpmap:106 H264/90000", "a=rtcp-fb:106 nack",
                "a=rtcp-fb:106 nack pli",
                "a=fmtp:106 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f",
                "a=rtpmap:107 rtx/90000", "a=fmtp:107 apt=106", "a=rtpmap:112 H264/90000", "a=rtcp-fb:112 nack",
                "a=fmtp:112 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=64001f",
                "a=rtpmap:113 rtx/90000", "a=fmtp:113 apt=112",
            ]
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

struct SessionOfferTests {
    /// Our stream's SPS profile bytes pick the payload type of the same
    /// profile: constrained baseline 42e0 → 106, high 6400 → 112, main 4d00
    /// (not offered) → refused.
    @Test(arguments: [
        ([0x42, 0xE0, 0x1F] as [UInt8], 106 as Int?, 107 as Int?), ([0x42, 0xC0, 0x1E], 102, 103),
        ([0x64, 0x00, 0x28], 112, 113), ([0x4D, 0x40, 0x1F], nil, nil),
    ])
    func choosesThePayloadTypeOfOurProfile(profile: [UInt8], payloadType: Int?, rtx: Int?) throws {
        let offer = try SessionOffer(parsing: Offers.browser())
        #expect(offer.sections.map(\.kind) == ["audio", "video"])
        #expect(offer.bundle == ["0", "1"])
        guard let payloadType else {
            #expect(throws: MediaError.self) { try offer.negotiateVideo(streamProfileLevelID: profile) }
            return
        }
        let video = try offer.negotiateVideo(streamProfileLevelID: profile)
        #expect(Int(video.payloadType) == payloadType)
        #expect(video.retransmissionPayloadType.map(Int.init) == rtx)
        #expect(video.mid == "1")
        #expect(video.playoutDelayID == 6)
        #expect(video.absoluteCaptureTimeID == nil, "id 15 does not fit the one-byte form")
        #expect(video.reducedSizeRTCP)
        #expect(video.remoteUsernameFragment == "Hx4f")
        #expect(video.remoteFingerprint.count == 32 && video.remoteFingerprint.first == 0x5C)
    }

    @Test func answersTheVideoAndRejectsTheAudio() throws {
        let offer = try SessionOffer(parsing: Offers.browser())
        let video = try offer.negotiateVideo(streamProfileLevelID: [0x42, 0xC0, 0x1E])
        let parameters = AnswerParameters(
            usernameFragment: "ab12", password: "0123456789abcdefghijklmn",
            fingerprint: [UInt8](repeating: 0xAB, count: 32),
            candidateHost: "127.0.0.1", candidatePort: 40000, ssrc: 1111, retransmissionSSRC: 2222, sessionID: 7)
        let lines = offer.answer(video, parameters: parameters, streamProfileLevelID: [0x42, 0xC0, 0x1E])
            .components(separatedBy: "\r\n")
        let expected = [
            "v=0", "o=- 7 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 1", "a=ice-lite",
            "a=msid-semantic: WMS codecsessions", "m=audio 0 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=mid:0",
            "a=inactive", "m=video 40000 UDP/TLS/RTP/SAVPF 102 103", "c=IN IP4 127.0.0.1", "a=mid:1", "a=sendonly",
            "a=rtcp-mux", "a=rtcp-rsize", "a=ice-ufrag:ab12", "a=ice-pwd:0123456789abcdefghijklmn",
            "a=fingerprint:sha-256 " + [String](repeating: "AB", count: 32).joined(separator: ":"), "a=setup:passive",
            "a=extmap:6 http://www.webrtc.org/experiments/rtp-hdrext/playout-delay", "a=rtpmap:102 H264/90000",
            "a=rtcp-fb:102 nack", "a=rtcp-fb:102 nack pli", "a=rtcp-fb:102 ccm fir",
            "a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001e",
            "a=rtpmap:103 rtx/90000", "a=fmtp:103 apt=102", "a=ssrc-group:FID 1111 2222",
            "a=ssrc:1111 cname:codecsessions",
            "a=ssrc:2222 cname:codecsessions", "a=msid:codecsessions video",
            "a=candidate:1 1 udp 2130706431 127.0.0.1 40000 typ host", "a=end-of-candidates", "",
        ]
        #expect(lines == expected)
    }

    @Test(arguments: [
        (Offers.browser(fingerprintLine: nil), "no a=fingerprint"),
        (
            Offers.browser(
                fingerprintLine: "a=fingerprint:sha-1 01:02:03:04:05:06:07:08:09:0A:0B:0C:0D:0E:0F:10:11:12:13:14"),
            "not sha-256"
        ),
        (Offers.browser(h264: false), "no H.264 payload type"),
        (Offers.browser(setup: "passive"), "setup:passive"),
        (Offers.browser(rtcpMux: false), "rtcp-mux"),
        (Offers.browser(direction: "sendonly"), "does not receive"),
        ("v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n", "no video section"),
    ])
    func refusesOffersItCannotAnswer(text: String, reason: String) throws {
        let offer = try SessionOffer(parsing: text)
        do {
            _ = try offer.negotiateVideo(streamProfileLevelID: [0x42, 0xC0, 0x1E])
            Issue.record("accepted an offer that should be refused for: \(reason)")
        } catch { #expect(error.message.contains(reason), "\(error.message)") }
    }

    /// A publisher's offer (WHIP): the first H.264 payload type in
    /// packetization mode 1, whatever its profile, answered recvonly with
    /// no SSRCs of ours; a receive-only offer is refused.
    @Test func answersAPublishersOffer() throws {
        let offer = try SessionOffer(parsing: Offers.browser(direction: "sendonly"))
        let video = try offer.negotiateIncomingVideo()
        #expect(video.payloadType == 102 && video.retransmissionPayloadType == 103 && video.isIncoming)
        let parameters = AnswerParameters(
            usernameFragment: "ab12", password: "0123456789abcdefghijklmn",
            fingerprint: [UInt8](repeating: 0xAB, count: 32), candidateHost: "127.0.0.1", candidatePort: 40000,
            ssrc: 1111, retransmissionSSRC: nil, sessionID: 7)
        let lines = offer.answer(video, parameters: parameters, streamProfileLevelID: [0x42, 0xE0, 0x1F])
            .components(separatedBy: "\r\n")
        #expect(lines.contains("a=recvonly") && !lines.contains("a=sendonly"))
        #expect(lines.contains("a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f"))
        #expect(!lines.contains { $0.hasPrefix("a=ssrc") || $0.hasPrefix("a=msid:") || $0.hasPrefix("a=extmap") })
        do {
            _ = try SessionOffer(parsing: Offers.browser()).negotiateIncomingVideo()
            Issue.record("a receive-only offer was taken as a publisher's")
        } catch { #expect(error.message.contains("does not send")) }
    }

    @Test(arguments: [
        "", "hello", "v=1\r\n", "v=0\r\nm=video x UDP 96\r\n", "v=0\r\nm=video / UDP 96\r\n",
        String(repeating: "a", count: 70000),
    ])
    func refusesTextThatIsNoOffer(text: String) {
        #expect(throws: MediaError.self) { try SessionOffer(parsing: text) }
    }

    /// A WHEP endpoint refuses request heads that break HTTP/1.1's syntax
    /// (RFC 9112) with the status the RFCs give: 400 for a malformed head,
    /// 505 for another HTTP version, 431 for too many header fields.
    @Test(arguments: [
        ("POST whep HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("POST  /whep HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("PO(T /whep HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("POST /whep HTTP/1.2\r\nHost: x\r\n\r\n", 505),
        ("POST /whep HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        // Two lengths (equal or not) and lengths that are not digits leave
        // the body's end in doubt (RFC 9112 6.3).
        ("POST /whep HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 400\r\n\r\nv=0\n", 400),
        ("POST /whep HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\nv=0\n", 400),
        ("POST /whep HTTP/1.1\r\nContent-Length: +4\r\n\r\nv=0\n", 400),
        (
            "POST /whep HTTP/1.1\r\n" + (0..<65).map { "X-\($0): y\r\n" }.joined() + "\r\n", 431
        ),
    ])
    func refusesMalformedWHEPRequestHeads(head: String, status: Int) {
        guard case .invalid(let refused, let reason) = WHEPRequest.parse(Array(head.utf8)) else {
            Issue.record("\(head.debugDescription) was not refused")
            return
        }
        #expect(refused == status, "\(head.debugDescription): \(reason)")
        #expect(!reason.isEmpty)
    }

    @Test func readsWHEPRequests() {
        let body = Array(Offers.browser().utf8)
        let head =
            "POST /whep HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\nContent-Length: \(body.count)\r\n\r\n"
        let bytes = Array(head.utf8) + body
        #expect(WHEPRequest.parse(Array(bytes.dropLast(1))) == .incomplete)
        guard case .complete(let request) = WHEPRequest.parse(bytes) else {
            Issue.record("a whole request did not parse")
            return
        }
        #expect(request.method == "POST" && request.path == "/whep" && request.body == body)
        #expect(request.fields["content-type"] == "application/sdp")
        let chunked = Array("POST /whep HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        #expect(
            WHEPRequest.parse(chunked)
                == .invalid(status: 411, reason: "chunked bodies are not taken; send Content-Length"))
    }
}
