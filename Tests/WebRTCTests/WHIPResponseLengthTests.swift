import MediaCore
import Testing
import WebRTC

/// The WHIP client's reading of a response body against its Content-Length.
struct WHIPResponseLengthTests {
    static let head = "HTTP/1.1 201 Created\r\nLocation: /whip/1\r\nContent-Type: application/sdp\r\n"

    /// A connection that closed before the announced body ended is not an
    /// answer.
    @Test func aTruncatedBodyIsRefused() {
        let bytes = Array((Self.head + "Content-Length: 100\r\n\r\nv=0\r\no=- 1 2 IN IP4 127.0.0.1\r\n").utf8)
        #expect {
            try WHIPResponse.parse(bytes)
        } throws: { error in
            (error as? MediaError)?.message
                == "the WHIP endpoint closed the connection after 31 of the 100 body bytes it announced "
                + "(a truncated response)"
        }
    }

    @Test func theBodyEndsAtContentLength() throws {
        let response = try WHIPResponse.parse(Array((Self.head + "Content-Length: 5\r\n\r\nv=0\r\nEXTRA").utf8))
        #expect(response.body == "v=0\r\n")
    }

    @Test(arguments: ["Content-Length: 5\r\nContent-Length: 6", "Content-Length: -5", "Content-Length: 5x"])
    func malformedOrConflictingLengthsAreRefused(_ fields: String) {
        #expect(throws: MediaError.self) {
            try WHIPResponse.parse(Array((Self.head + fields + "\r\n\r\nv=0\r\n").utf8))
        }
    }

    /// Without Content-Length the body is all the endpoint sent.
    @Test func withoutContentLengthTheBodyIsAll() throws {
        #expect(try WHIPResponse.parse(Array((Self.head + "\r\nv=0\r\n").utf8)).body == "v=0\r\n")
    }
}
