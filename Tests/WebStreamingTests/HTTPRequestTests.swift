import Testing
import WebStreaming

/// The request-head parser, table by table.
struct HTTPRequestTests {
    @Test func getWithFields() throws {
        let text =
            "GET /stats?digest=1&x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nConnection:  keep-alive, Upgrade \r\n\r\nrest"
        guard case .complete(let request, let consumed) = HTTPRequest.parse(Array(text.utf8)[...]) else {
            Issue.record("not parsed")
            return
        }
        #expect(consumed == text.utf8.count - 4)
        #expect(request.method == "GET")
        #expect(request.path == "/stats")
        #expect(request.query.map { "\($0.name)=\($0.value)" } == ["digest=1", "x="])
        #expect(request.minorVersion == 1)
        #expect(request.field("HOST") == "127.0.0.1:8080")
        #expect(request.field("connection") == "keep-alive, Upgrade")
        #expect(request.field("Connection", contains: "upgrade"))
        #expect(!request.field("Connection", contains: "close"))
    }

    /// Every proper prefix of a request is incomplete.
    @Test func prefixesAreIncomplete() {
        let bytes = Array("GET / HTTP/1.0\r\nA: b\r\n\r\n".utf8)
        for length in 0..<bytes.count {
            #expect(HTTPRequest.parse(bytes[0..<length]) == .incomplete, "length \(length)")
        }
        #expect(HTTPRequest.parse(bytes[...]) != .incomplete)
    }

    @Test(arguments: [
        ("GET /\r\n\r\n", 400),
        ("GET  / HTTP/1.1\r\n\r\n", 400),
        ("GET x HTTP/1.1\r\n\r\n", 400),
        ("G(T / HTTP/1.1\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\n\r\n", 505),
        ("GET / HTTP/1.2\r\n\r\n", 505),
        ("GET / HTTP/1.1\r\nA b\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n folded\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nA\r: b\r\n\r\n", 400),
        ("GET / HTTP/1.1\nA: b\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nA: b\u{1}c\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", 400),
        ("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
    ])
    func invalid(text: String, status: Int) {
        guard case .invalid(let got, _) = HTTPRequest.parse(Array(text.utf8)[...]) else {
            Issue.record("\(text.debugDescription) was accepted")
            return
        }
        #expect(got == status, "\(text.debugDescription)")
    }

    @Test func bounds() {
        let long = Array(("GET / HTTP/1.1\r\nA: " + String(repeating: "x", count: 9000)).utf8)
        guard case .invalid(431, _) = HTTPRequest.parse(long[...]) else {
            Issue.record("an endless head is not refused")
            return
        }
        let many = "GET / HTTP/1.1\r\n" + (0..<65).map { "F\($0): v\r\n" }.joined() + "\r\n"
        guard case .invalid(431, _) = HTTPRequest.parse(Array(many.utf8)[...]) else {
            Issue.record("65 fields are not refused")
            return
        }
        let enough = "GET / HTTP/1.1\r\n" + (0..<64).map { "F\($0): v\r\n" }.joined() + "\r\n"
        guard case .complete(let request, _) = HTTPRequest.parse(Array(enough.utf8)[...]) else {
            Issue.record("64 fields are refused")
            return
        }
        #expect(request.fields.count == 64)
    }

    /// The handshake of RFC 6455 1.2 / 4.2.2, and refusals.
    @Test func webSocketHandshake() throws {
        func request(_ extra: String, version: String = "1.1") -> HTTPRequest? {
            let text = "GET /stream HTTP/\(version)\r\nHost: a\r\n\(extra)\r\n"
            if case .complete(let r, _) = HTTPRequest.parse(Array(text.utf8)[...]) { return r }
            return nil
        }
        let good =
            "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            + "Sec-WebSocket-Version: 13\r\n"
        let response = try WebSocket.handshakeResponse(for: try #require(request(good))).get()
        #expect(
            String(decoding: response, as: UTF8.self)
                == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
        let refusals: [(HTTPRequest?, Int)] = [
            (request(good.replacingOccurrences(of: "Version: 13", with: "Version: 8")), 426),
            (request(good.replacingOccurrences(of: "Upgrade: websocket\r\n", with: "")), 426),
            (request(good.replacingOccurrences(of: "dGhlIHNhbXBsZSBub25jZQ==", with: "c2hvcnQ=")), 400),
            (request(good, version: "1.0"), 400),
        ]
        for (r, status) in refusals {
            let outcome = WebSocket.handshakeResponse(for: try #require(r))
            guard case .failure(let refusal) = outcome else {
                Issue.record("accepted")
                continue
            }
            #expect(refusal.status == status)
        }
    }
}
