// transport-cc and goog-remb in WebRTC offers and answers, and header extension
// elements added to a packet that already carries a transport-wide sequence number.
import MediaCore
import RTPPayload
import Testing

@testable import WebRTC

struct TransportFeedbackNegotiationTests {
    static let uri = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

    /// Chrome's offer lines for transport-wide congestion control (extmap 3, `transport-cc` and `goog-remb` on the
    /// payload type) added to the browser-shaped offer.
    static func offer(feedback: Bool = true, direction: String = "recvonly") -> String {
        var text = Offers.browser(direction: direction)
        text = text.replacingOccurrences(
            of: "a=extmap:1 urn:ietf:params:rtp-hdrext:toffset\r\n",
            with: "a=extmap:1 urn:ietf:params:rtp-hdrext:toffset\r\na=extmap:3 \(uri)\r\n")
        if feedback {
            text = text.replacingOccurrences(
                of: "a=rtcp-fb:106 nack\r\n",
                with: "a=rtcp-fb:106 goog-remb\r\na=rtcp-fb:106 transport-cc\r\na=rtcp-fb:106 nack\r\n")
            text = text.replacingOccurrences(
                of: "a=rtcp-fb:102 nack\r\n", with: "a=rtcp-fb:102 nack\r\na=rtcp-fb:102 transport-cc\r\n")
        }
        return text
    }

    static let parameters = AnswerParameters(
        usernameFragment: "ours", password: "0123456789012345678901", fingerprint: Array(repeating: 0xAB, count: 32),
        candidateHost: "127.0.0.1", candidatePort: 5000, ssrc: 0x1111, retransmissionSSRC: 0x2222)

    /// A viewer (WHEP) that offers transport-cc and goog-remb gets both in the answer, with the extension's id.
    @Test func whepAnswerTakesTransportCCAndREMB() throws {
        let offer = try SessionOffer(parsing: Self.offer())
        let video = try offer.negotiateVideo(streamProfileLevelID: [0x42, 0xE0, 0x1F])
        #expect(video.payloadType == 106)
        #expect(video.transportSequenceNumberID == 3)
        #expect(video.receiverEstimatedMaximumBitrate)
        let answer = offer.answer(video, parameters: Self.parameters, streamProfileLevelID: [0x42, 0xE0, 0x1F])
        let lines = answer.components(separatedBy: "\r\n")
        #expect(lines.contains("a=extmap:3 \(Self.uri)"))
        #expect(lines.contains("a=rtcp-fb:106 transport-cc"))
        #expect(lines.contains("a=rtcp-fb:106 goog-remb"))
        let parsed = try SessionOffer(parsing: answer, describing: "answer")
        let section = try #require(parsed.sections.first { $0.kind == "video" && $0.port != 0 })
        #expect(section.extensions.contains { $0.id == 3 && $0.uri == Self.uri })
        #expect(section.feedback[106]?.contains("transport-cc") == true)
    }

    /// The extension without `transport-cc` feedback (or feedback without the extension) negotiates neither.
    @Test func extensionAloneIsNotTransportCC() throws {
        let offer = try SessionOffer(parsing: Self.offer(feedback: false))
        let video = try offer.negotiateVideo(streamProfileLevelID: [0x42, 0xE0, 0x1F])
        #expect(video.transportSequenceNumberID == nil)
        let answer = offer.answer(video, parameters: Self.parameters, streamProfileLevelID: [0x42, 0xE0, 0x1F])
        #expect(!answer.contains("transport-cc"))
        #expect(!answer.contains(Self.uri))
        // The unchanged browser offer's answer has no transport-cc either, nor goog-remb without it (102 offers
        // goog-remb alone).
        let remb = try SessionOffer(parsing: Offers.browser())
        let rembVideo = try remb.negotiateVideo(streamProfileLevelID: [0x42, 0xC0, 0x1E])
        #expect(rembVideo.payloadType == 102 && rembVideo.receiverEstimatedMaximumBitrate)
        #expect(
            !remb.answer(rembVideo, parameters: Self.parameters, streamProfileLevelID: [0x42, 0xC0, 0x1E])
                .contains("goog-remb"))
        let plain = try SessionOffer(parsing: Offers.browser())
        let plainVideo = try plain.negotiateVideo(streamProfileLevelID: [0x42, 0xE0, 0x1F])
        #expect(
            !plain.answer(plainVideo, parameters: Self.parameters, streamProfileLevelID: [0x42, 0xE0, 0x1F])
                .contains("transport-cc"))
    }

    /// A publisher (WHIP) that offers transport-cc gets it (we send the feedback), but no goog-remb (we send none).
    @Test func whipAnswerTakesTransportCCWithoutREMB() throws {
        let offer = try SessionOffer(parsing: Self.offer(direction: "sendonly"))
        let video = try offer.negotiateIncomingVideo()
        let answer = offer.answer(video, parameters: Self.parameters, streamProfileLevelID: [0x42, 0xE0, 0x1F])
        // The first H.264 payload type with packetization-mode=1: 102, which offers goog-remb too.
        #expect(video.payloadType == 102)
        #expect(video.transportSequenceNumberID == 3)
        #expect(video.receiverEstimatedMaximumBitrate)
        #expect(answer.contains("a=rtcp-fb:102 transport-cc\r\n"))
        #expect(answer.contains("a=extmap:3 \(Self.uri)\r\n"))
        #expect(!answer.contains("goog-remb"))
    }

    /// playout-delay added to a packet stamped with a transport-wide sequence number: both elements in one
    /// one-byte extension (RFC 8285 4.2).
    @Test func extensionWriterKeepsTheTransportSequenceNumber() throws {
        let header = RTPHeader(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3)
        let stamped = try TransportWideSequenceNumber.stamping(
            header.packet(payload: [0x65, 1]), extensionID: 3, sequenceNumber: 0x0A0B)
        let both = RTPHeaderExtensionWriter.adding([(6, RTPHeaderExtensionWriter.zeroPlayoutDelay)], to: stamped)
        #expect(Array(both[12..<24]) == [0xBE, 0xDE, 0x00, 0x02, 0x31, 0x0A, 0x0B, 0x62, 0, 0, 0, 0])
        #expect(Array(both[24...]) == [0x65, 1])
    }
}
