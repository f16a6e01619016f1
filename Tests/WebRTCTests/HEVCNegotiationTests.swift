// H.265 in WebRTC offers and answers (RFC 7798 7.1/7.2): a Chrome-shaped offer
// with H.264 and H.265 payload types, the choice by the source's codec and
// profile, the answer's lines, and the refusal that names the codecs.
import MediaCore
import Testing

@testable import WebRTC

/// Offers shaped like Chrome's (136+, with HEVC): VP8, H.264, then H.265
/// at `level-id=93` (level 3.1) and `level-id=180` (level 6) for
/// `profile-id=1` (Main) and `level-id=180` for `profile-id=2` (Main 10),
/// every one `tier-flag=0;tx-mode=SRST`, each with RTX and transport-cc.
enum HEVCOffers {
    static func chrome(direction: String = "recvonly", hevcFirst: Bool = false, txMode: String = "SRST") -> String {
        let h264 = [
            "a=rtpmap:102 H264/90000", "a=rtcp-fb:102 goog-remb", "a=rtcp-fb:102 transport-cc",
            "a=rtcp-fb:102 ccm fir", "a=rtcp-fb:102 nack", "a=rtcp-fb:102 nack pli",
            "a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f",
            "a=rtpmap:103 rtx/90000", "a=fmtp:103 apt=102",
        ]
        var hevc: [String] = []
        for (payloadType, parameters) in [
            (104, "level-id=93;profile-id=1;tier-flag=0;tx-mode=\(txMode)"),
            (106, "level-id=180;profile-id=1;tier-flag=0;tx-mode=\(txMode)"),
            (108, "level-id=180;profile-id=2;tier-flag=0;tx-mode=\(txMode)"),
        ] {
            hevc += [
                "a=rtpmap:\(payloadType) H265/90000", "a=rtcp-fb:\(payloadType) goog-remb",
                "a=rtcp-fb:\(payloadType) transport-cc", "a=rtcp-fb:\(payloadType) ccm fir",
                "a=rtcp-fb:\(payloadType) nack", "a=rtcp-fb:\(payloadType) nack pli",
                "a=fmtp:\(payloadType) \(parameters)", "a=rtpmap:\(payloadType + 1) rtx/90000",
                "a=fmtp:\(payloadType + 1) apt=\(payloadType)",
            ]
        }
        let formats = hevcFirst ? "96 97 104 105 106 107 108 109 102 103" : "96 97 102 103 104 105 106 107 108 109"
        var lines = [
            "v=0", "o=- 5817245362416789321 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
            "a=extmap-allow-mixed", "a=msid-semantic: WMS",
            "m=video 9 UDP/TLS/RTP/SAVPF \(formats)", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0",
            "a=ice-ufrag:Hx4f", "a=ice-pwd:q9ZkU2m1LxJ4rN0vPb7YcT3e", "a=ice-options:trickle",
            "a=fingerprint:" + Offers.fingerprint, "a=setup:actpass", "a=mid:0",
            "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
            "a=\(direction)", "a=rtcp-mux", "a=rtcp-rsize", "a=rtpmap:96 VP8/90000", "a=rtcp-fb:96 nack",
            "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96",
        ]
        lines += hevcFirst ? hevc + h264 : h264 + hevc
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

struct HEVCNegotiationTests {
    static let parameters = AnswerParameters(
        usernameFragment: "abcd", password: "0123456789abcdefghijklmn",
        fingerprint: [UInt8](repeating: 0xAB, count: 32),
        candidateHost: "127.0.0.1", candidatePort: 40000, ssrc: 1111, retransmissionSSRC: 2222, sessionID: 7)

    /// The lines of `text` from the video section's m= line on.
    static func videoLines(_ text: String) -> [String] {
        let lines = text.components(separatedBy: "\r\n")
        return Array(lines.drop { !$0.hasPrefix("m=video") })
    }

    /// An HEVC stream picks the H.265 payload type of its profile whose
    /// level-id is at least the stream's (RFC 7798: level-id is
    /// general_level_idc, 30 × the level), the offer's first among equals;
    /// a Main stream goes to a Main 10 payload type only when no Main one is
    /// offered; an H.264 stream picks H.264 although H.265 is offered.
    @Test(arguments: [
        (VideoStreamFormat.hevc(profileID: 1, tierFlag: 0, levelID: 93), 104, CodecType.hevc),
        (.hevc(profileID: 1, tierFlag: 0, levelID: 60), 104, .hevc),
        (.hevc(profileID: 1, tierFlag: 0, levelID: 120), 106, .hevc),
        (.hevc(profileID: 2, tierFlag: 0, levelID: 93), 108, .hevc),
        (.h264(profileLevelID: [0x42, 0xE0, 0x1F]), 102, .h264),
    ])
    func picksThePayloadTypeTheSourceAllows(format: VideoStreamFormat, payloadType: Int, codec: CodecType) throws {
        let offer = try SessionOffer(parsing: HEVCOffers.chrome())
        let video = try offer.negotiateVideo(sending: format)
        #expect(video.payloadType == UInt8(payloadType))
        #expect(video.retransmissionPayloadType == UInt8(payloadType + 1))
        #expect(video.codec == codec)
        #expect(video.transportSequenceNumberID == 3)
        #expect(video.nack && video.pictureLossIndication && video.fullIntraRequest)
    }

    /// The answer to a Chrome-shaped offer for a Main level 3.1 stream: the
    /// H.265 payload type with the stream's profile-id, tier-flag and
    /// level-id in the browsers' fmtp order, its RTX, and the feedback
    /// H.264 gets.
    @Test func answersH265WithTheStreamsParameters() throws {
        let offer = try SessionOffer(parsing: HEVCOffers.chrome())
        let stream = VideoStreamFormat.hevc(profileID: 1, tierFlag: 0, levelID: 93)
        let video = try offer.negotiateVideo(sending: stream)
        let lines = Self.videoLines(offer.answer(video, parameters: Self.parameters, stream: stream))
        #expect(lines.first == "m=video 40000 UDP/TLS/RTP/SAVPF 104 105")
        let media = lines.filter { $0.hasPrefix("a=rtpmap") || $0.hasPrefix("a=fmtp") || $0.hasPrefix("a=rtcp-fb") }
        #expect(
            media == [
                "a=rtpmap:104 H265/90000", "a=rtcp-fb:104 nack", "a=rtcp-fb:104 nack pli", "a=rtcp-fb:104 ccm fir",
                "a=rtcp-fb:104 transport-cc", "a=rtcp-fb:104 goog-remb",
                "a=fmtp:104 level-id=93;profile-id=1;tier-flag=0;tx-mode=SRST", "a=rtpmap:105 rtx/90000",
                "a=fmtp:105 apt=104",
            ])
        #expect(lines.contains("a=sendonly") && lines.contains("a=ssrc-group:FID 1111 2222"))
        #expect(lines.contains("a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"))
    }

    /// A viewer that offers no H.265 gets no session for an HEVC stream: the
    /// reason names the stream's codec and what was offered.
    @Test func refusesAnH264OnlyOfferForAnHEVCStream() throws {
        let offer = try SessionOffer(parsing: Offers.browser())
        do {
            _ = try offer.negotiateVideo(sending: .hevc(profileID: 1, tierFlag: 0, levelID: 93))
            Issue.record("an H.264-only offer was accepted for an HEVC stream")
        } catch {
            #expect(
                error.message
                    == "the stream is H.265 (profile-id 1, tier-flag 0, level-id 93) and the offer has no payload "
                    + "type for it; it offers VP8 (96), H264 (102), H264 (106), H264 (112)")
        }
    }

    /// H.265 payload types with another tx-mode (MRST, MRMT: several RTP
    /// streams, which we do not send) are not taken.
    @Test func skipsMultiStreamTransmissionModes() throws {
        let offer = try SessionOffer(parsing: HEVCOffers.chrome(txMode: "MRST"))
        #expect(throws: MediaError.self) {
            try offer.negotiateVideo(sending: .hevc(profileID: 1, tierFlag: 0, levelID: 93))
        }
        let publisher = try SessionOffer(
            parsing: HEVCOffers.chrome(direction: "sendonly", hevcFirst: true, txMode: "MRST"))
        #expect(try publisher.negotiateIncomingVideo().codec == .h264)
    }

    /// A publisher's offer (WHIP) gets the first of its H.264 and H.265
    /// payload types, in its own order; the recvonly answer repeats the
    /// offered H.265 parameters.
    @Test(arguments: [(false, 102, CodecType.h264), (true, 104, .hevc)])
    func publishersOfferOrderDecides(hevcFirst: Bool, payloadType: Int, codec: CodecType) throws {
        let offer = try SessionOffer(parsing: HEVCOffers.chrome(direction: "sendonly", hevcFirst: hevcFirst))
        let video = try offer.negotiateIncomingVideo()
        #expect(video.payloadType == UInt8(payloadType) && video.codec == codec)
        let lines = Self.videoLines(
            offer.answer(video, parameters: Self.parameters, stream: .h264(profileLevelID: [0x42, 0xE0, 0x1F])))
        #expect(lines.contains("a=recvonly"))
        if codec == .hevc {
            #expect(lines.contains("a=rtpmap:104 H265/90000"))
            #expect(lines.contains("a=fmtp:104 level-id=93;profile-id=1;tier-flag=0;tx-mode=SRST"))
        } else {
            #expect(lines.contains("a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f"))
        }
    }

    /// Through the WHEP endpoint: an HEVC stream answers a Chrome-shaped
    /// offer 201 with H.265, and an H.264-only offer 400 with the reason.
    @Test func whepEndpointServesHEVCOnlyToViewersThatOfferIt() throws {
        let server = try WHEPServer(.init())
        server.setLive(.hevc(profileID: 1, tierFlag: 0, levelID: 93))
        let accepted = try WHEPServerTests.exchange(server, WHEPServerTests.post(HEVCOffers.chrome()))
        #expect(accepted.status == 201)
        #expect(accepted.body.contains("a=fmtp:104 level-id=93;profile-id=1;tier-flag=0;tx-mode=SRST\r\n"))
        let refused = try WHEPServerTests.exchange(server, WHEPServerTests.post(Offers.browser()))
        #expect(refused.status == 400)
        #expect(
            refused.body
                == "the stream is H.265 (profile-id 1, tier-flag 0, level-id 93) and the offer has no payload type "
                + "for it; it offers VP8 (96), H264 (102), H264 (106), H264 (112)")
    }
}
