// The WHIP client publishing HEVC against a scripted endpoint: the offer's
// H.265 lines (RFC 7798 parameters from the stream) and the error for an
// answer that takes another codec than the one offered.
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import WebRTC

@Suite(.serialized)
struct HEVCWHIPClientTests {
    static let format = VideoStreamFormat.hevc(profileID: 1, tierFlag: 0, levelID: 93)

    /// The offer POSTed for an HEVC stream: payload type 96 as H265/90000
    /// with the stream's profile-id, tier-flag and level-id in the browsers'
    /// order, tx-mode SRST, the same feedback as for H.264, and RTX 97.
    @Test func offersH265WithTheStreamsParameters() throws {
        let client = try WHIPClient(url: "http://127.0.0.1:9/whip", format: Self.format)
        let lines = client.offer.components(separatedBy: "\r\n")
        #expect(lines.contains { $0.hasPrefix("m=video ") && $0.hasSuffix(" UDP/TLS/RTP/SAVPF 96 97") })
        let media = lines.filter { $0.hasPrefix("a=rtpmap") || $0.hasPrefix("a=fmtp") || $0.hasPrefix("a=rtcp-fb") }
        #expect(
            media == [
                "a=rtpmap:96 H265/90000", "a=rtcp-fb:96 nack", "a=rtcp-fb:96 nack pli", "a=rtcp-fb:96 ccm fir",
                "a=rtcp-fb:96 transport-cc", "a=rtcp-fb:96 goog-remb",
                "a=fmtp:96 level-id=93;profile-id=1;tier-flag=0;tx-mode=SRST", "a=rtpmap:97 rtx/90000",
                "a=fmtp:97 apt=96",
            ])
        // Our own endpoint reads it as an H.265 publisher.
        #expect(try SessionOffer(parsing: client.offer).negotiateIncomingVideo().codec == .hevc)
    }

    /// An answer that maps payload type 96 to H.264 when H.265 was offered
    /// is refused with a reason, before any ICE check.
    @Test func refusesAnAnswerWithAnotherCodec() throws {
        let answer = WHIPClientSignallingTests.answer(candidates: [(host: "127.0.0.1", port: 9)])
        let endpoint = try FakeHTTPEndpoint { _, _ in WHIPClientSignallingTests.created(answer) }
        let client = try WHIPClient(url: "http://127.0.0.1:\(endpoint.port)/whip", format: Self.format)
        #expect {
            try client.connect(timeoutSeconds: 1)
        } throws: { error in
            (error as? MediaError)?.message == "the answer does not take H.265 as offered (payload type 96)"
        }
        #expect(client.checks == nil)
    }
}
