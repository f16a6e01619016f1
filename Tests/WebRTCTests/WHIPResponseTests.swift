import MediaCore
import Testing
import WebRTC

/// The WHIP client's reading of an endpoint's HTTP response.
struct WHIPResponseTests {
    @Test func createdWithLocationAndAnswer() throws {
        let bytes = Array(
            "HTTP/1.1 201 Created\r\nLocation:  /whip/7 \r\nContent-Type: application/sdp\r\n\r\nv=0\r\n".utf8)
        let response = try WHIPResponse.parse(bytes)
        #expect(response.status == 201)
        #expect(response.fields["location"] == "/whip/7")
        #expect(response.fields["content-type"] == "application/sdp")
        #expect(response.body == "v=0\r\n")
    }

    @Test(arguments: [
        "HTTP/1.1 201 Created\r\nLocation: /x\r\n",  // head not ended
        "HTTP/1.1 Created\r\n\r\n",  // no status
        "SIP/2.0 200 OK\r\n\r\n",  // not HTTP
        "HTTP/1.1 20 Short\r\n\r\n",  // not three digits
        "",
    ])
    func malformedResponsesAreRefused(_ text: String) {
        #expect(throws: MediaError.self) { try WHIPResponse.parse(Array(text.utf8)) }
    }
}
