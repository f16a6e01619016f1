// transport-cc and goog-remb in the plain-RTP SDP: written, read back, and
// malformed lines refused with the line named.
import FormatConv
import MediaCore
import RTPPayload
import Testing

struct SessionDescriptionTransportCCTests {
    static let uri = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

    @Test func writesAndReadsTransportCC() throws {
        var sdp = RTPSessionDescription(codec: .h264, connectionAddress: "127.0.0.1", port: 5004)
        let plain = sdp.text
        sdp.transportSequenceNumberExtensionID = 3
        sdp.receiverEstimatedMaximumBitrate = true
        let lines = sdp.text.components(separatedBy: "\r\n")
        #expect(lines.contains("m=video 5004 RTP/AVPF 96"))
        #expect(
            lines.suffix(4) == ["a=extmap:3 \(Self.uri)", "a=rtcp-fb:96 transport-cc", "a=rtcp-fb:96 goog-remb", ""])
        let read = try RTPSessionDescription(parsing: sdp.text)
        #expect(read.transportSequenceNumberExtensionID == 3)
        #expect(read.receiverEstimatedMaximumBitrate)
        #expect(read == sdp)
        // Without them the text is as before.
        #expect(!plain.contains("extmap") && plain.contains("RTP/AVP 96"))
        let none = try RTPSessionDescription(parsing: plain)
        #expect(none.transportSequenceNumberExtensionID == nil && !none.receiverEstimatedMaximumBitrate)
    }

    /// RFC 4585 4.2 `*` applies to every payload type; RFC 8285 8 allows a direction after the id; the extension
    /// without `transport-cc` feedback is not taken.
    @Test func readsWildcardsDirectionsAndRefusesMalformedLines() throws {
        let head =
            "v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=x\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=video 5004 RTP/AVPF 96\r\n"
            + "a=rtpmap:96 H264/90000\r\n"
        let wildcard = try RTPSessionDescription(
            parsing: head + "a=extmap:7/recvonly \(Self.uri)\r\na=rtcp-fb:* transport-cc\r\n")
        #expect(wildcard.transportSequenceNumberExtensionID == 7)
        let alone = try RTPSessionDescription(parsing: head + "a=extmap:7 \(Self.uri)\r\n")
        #expect(alone.transportSequenceNumberExtensionID == nil)
        #expect(
            throws: MediaError.invalidData(
                "SDP line 8: malformed 'a=extmap:x \(Self.uri)' (expected a=extmap:ID[/DIRECTION] URI, ID 1…255)")
        ) {
            _ = try RTPSessionDescription(parsing: head + "a=extmap:x \(Self.uri)\r\n")
        }
        #expect(throws: MediaError.self) { _ = try RTPSessionDescription(parsing: head + "a=rtcp-fb:96\r\n") }
    }
}
