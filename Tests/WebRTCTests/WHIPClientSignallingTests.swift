import Foundation
import MediaCore
import TestSupport
import Testing

@testable import WebRTC

#if canImport(Glibc)
    import Glibc
#endif

/// The WHIP client against scripted HTTP endpoints on loopback: which
/// candidates it checks and how often, its bearer token, redirects, and
/// what it says about answers it cannot use.
@Suite(.serialized)
struct WHIPClientSignallingTests {
    static let profile: [UInt8] = [0x42, 0xC0, 0x1E]

    /// An SDP answer taking H.264 as payload type 96 with `candidates`.
    static func answer(candidates: [(host: String, port: Int)]) -> String {
        let lines =
            [
                "v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
                "m=video 9 UDP/TLS/RTP/SAVPF 96 97", "c=IN IP4 127.0.0.1", "a=mid:0", "a=recvonly", "a=rtcp-mux",
                "a=ice-ufrag:Fake", "a=ice-pwd:FakeEndpointPassword0123456",
                "a=fingerprint:sha-256 \(DTLSCertificate.shared.fingerprintText)", "a=setup:passive",
                "a=rtpmap:96 H264/90000", "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96",
            ]
            + candidates.enumerated().map {
                "a=candidate:\($0.offset + 1) 1 udp 2130706431 \($0.element.host) \($0.element.port) typ host"
            }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    static func created(_ body: String, location: String = "/whip/1") -> String {
        "HTTP/1.1 201 Created\r\nLocation: \(location)\r\nContent-Type: application/sdp\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
    }

    static let unauthorized =
        "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\nContent-Length: 0\r\n\r\n"

    /// A non-blocking UDP socket bound to `host` (a 127.0.0.x address), port 0.
    static func loopbackSocket(_ host: String) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw ProcessError("cannot bind UDP \(host)") }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// The datagrams waiting on `fd`.
    static func drain(_ fd: Int32) -> [[UInt8]] {
        var datagrams: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count >= 0 else { return datagrams }
            datagrams.append(Array(buffer[0..<count]))
        }
    }

    /// An answer naming nine silent loopback candidates (127.0.0.2–10), one
    /// of them twice, and an IPv6 one: the client checks only the first
    /// eight, paced (one check per 50 ms in all, one per 200 ms to any
    /// one), stops at its 1 s deadline, and says what it passed over. (The
    /// client has an IPv6 host candidate too, ::1 beside 127.0.0.1, so the
    /// IPv6 candidate is of its families and falls past the limit; the
    /// refusal of another family is ICECheckScheduleTests'.)
    @Test func checksOnlyWhatTheScheduleLetsOut() throws {
        let sockets = try (2...10).map { try Self.loopbackSocket("127.0.0.\($0)") }
        defer { for socket in sockets { close(socket.fd) } }
        var candidates = sockets.enumerated().map { (host: "127.0.0.\($0.offset + 2)", port: $0.element.port) }
        candidates += [(host: "127.0.0.2", port: sockets[0].port), (host: "::1", port: 9)]
        let answer = Self.answer(candidates: candidates)
        let endpoint = try FakeHTTPEndpoint { _, _ in Self.created(answer) }
        let client = try WHIPClient(url: "http://127.0.0.1:\(endpoint.port)/whip", profileLevelID: Self.profile)
        // Without IPv6 on loopback the client has no ::1 candidate and refuses the IPv6 one as of another family.
        let hasIPv6 = client.hostCandidates.contains { $0.isIPv6 }
        #expect {
            try client.connect(timeoutSeconds: 1)
        } throws: { error in
            let message = (error as? MediaError)?.message ?? ""
            return message.contains("no ICE check succeeded (8 remote candidates checked")
                && message.contains(
                    hasIPv6
                        ? "not checked: a candidate already listed ×1; a candidate past the limit ×2"
                        : "not checked: an address of another family ×1; a candidate already listed ×1; "
                            + "a candidate past the limit ×1")
        }
        let received = sockets.map { Self.drain($0.fd) }
        let counts = received.map(\.count)
        let checks = try #require(client.checks)
        #expect(counts.reduce(0, +) == checks.checksSent)
        #expect(counts[8] == 0, "the ninth candidate is past the limit")
        for (index, count) in counts.prefix(8).enumerated() {
            // At least one check each; at most one per 200 ms within 1 s.
            #expect((1...6).contains(count), "127.0.0.\(index + 2): \(count) checks")
        }
        #expect(checks.checksSent <= 21, "one check per 50 ms in 1 s")
        #expect(received.joined().allSatisfy { $0.count > 20 && $0[0] == 0x00 && $0[1] == 0x01 }, "binding requests")
        #expect(client.location == "http://127.0.0.1:\(endpoint.port)/whip/1")
    }

    static let token = "abc.DEF-123~+/="

    @Test func aRefusedTokenIsReportedAndNeverRepeated() throws {
        let endpoint = try FakeHTTPEndpoint { _, _ in Self.unauthorized }
        let client = try WHIPClient(
            url: "http://127.0.0.1:\(endpoint.port)/whip", profileLevelID: Self.profile, token: Self.token)
        #expect {
            try client.connect(timeoutSeconds: 1)
        } throws: { error in
            (error as? MediaError)?.message == "the endpoint refused the token (401) for POST"
        }
        #expect(endpoint.requests.map(\.authorization) == ["Bearer \(Self.token)"])

        let anonymous = try WHIPClient(url: "http://127.0.0.1:\(endpoint.port)/whip", profileLevelID: Self.profile)
        #expect {
            try anonymous.connect(timeoutSeconds: 1)
        } throws: { error in
            (error as? MediaError)?.message == "the endpoint requires a token (401) for POST"
        }
        #expect(endpoint.requests.count == 2 && endpoint.requests[1].authorization == nil)
    }

    @Test(arguments: ["two words", "line\r\nX-Injected: 1", "", "=abc", "abc=d", "tök"])
    func aTokenOutsideRFC6750IsRefused(_ token: String) {
        #expect {
            try WHIPClient(url: "http://127.0.0.1:9/whip", profileLevelID: Self.profile, token: token)
        } throws: { error in
            let message = (error as? MediaError)?.message ?? ""
            return message.hasPrefix("the token is not a bearer token") && (token.isEmpty || !message.contains(token))
        }
    }

    /// The DELETE carries the token too, to the session URL the endpoint
    /// named.
    @Test func theDeleteCarriesTheToken() throws {
        let endpoint = try FakeHTTPEndpoint { _, _ in "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" }
        let client = try WHIPClient(
            url: "http://127.0.0.1:\(endpoint.port)/whip", profileLevelID: Self.profile, token: Self.token)
        client.session = try WHIPEndpointURL(parsing: "http://127.0.0.1:\(endpoint.port)/whip/s1")
        #expect(try client.finish() == .deleted(status: 200))
        #expect(endpoint.requests.map { "\($0.method) \($0.target)" } == ["DELETE /whip/s1"])
        #expect(endpoint.requests.map(\.authorization) == ["Bearer \(Self.token)"])
    }

    /// A 307 to another origin: the same POST and body go there, without
    /// the token.
    @Test func aRedirectToAnotherOriginDropsTheToken() throws {
        let other = try FakeHTTPEndpoint { _, _ in Self.unauthorized }
        let endpoint = try FakeHTTPEndpoint { _, _ in
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:\(other.port)/elsewhere\r\n"
                + "Content-Length: 0\r\n\r\n"
        }
        let client = try WHIPClient(
            url: "http://127.0.0.1:\(endpoint.port)/whip", profileLevelID: Self.profile, token: Self.token)
        #expect(throws: MediaError.self) { try client.connect(timeoutSeconds: 1) }
        let first = try #require(endpoint.requests.first)
        let second = try #require(other.requests.first)
        #expect(first.authorization == "Bearer \(Self.token)")
        #expect(second.method == "POST" && second.target == "/elsewhere" && second.authorization == nil)
        #expect(second.body == first.body && first.body.hasPrefix("v=0\r\n"))
    }

    /// A 308 within the origin keeps method, body and token; a session URL
    /// is resolved against the URL that answered.
    @Test func aRedirectWithinTheOriginKeepsTheToken() throws {
        let endpoint = try FakeHTTPEndpoint { index, _ in
            index == 0
                ? "HTTP/1.1 308 Permanent Redirect\r\nLocation: /moved/whip\r\nContent-Length: 0\r\n\r\n"
                : Self.created(Self.answer(candidates: []), location: "session/9")
        }
        let client = try WHIPClient(
            url: "http://127.0.0.1:\(endpoint.port)/whip", profileLevelID: Self.profile, token: Self.token)
        #expect(throws: MediaError.self) { try client.connect(timeoutSeconds: 0.2) }
        let requests = endpoint.requests
        #expect(requests.map { "\($0.method) \($0.target)" } == ["POST /whip", "POST /moved/whip"])
        #expect(requests.map(\.authorization) == Array(repeating: "Bearer \(Self.token)", count: 2))
        #expect(requests[0].body == requests[1].body)
        #expect(client.location == "http://127.0.0.1:\(endpoint.port)/moved/session/9")
    }

    @Test func redirectsAreBounded() throws {
        let endpoint = try FakeHTTPEndpoint { _, _ in
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: /whip\r\nContent-Length: 0\r\n\r\n"
        }
        let client = try WHIPClient(url: "http://127.0.0.1:\(endpoint.port)/whip", profileLevelID: Self.profile)
        #expect {
            try client.connect(timeoutSeconds: 1)
        } throws: { error in
            (error as? MediaError)?.message == "the WHIP endpoint redirected POST more than 5 times"
        }
        #expect(endpoint.requests.count == 6)
    }

    struct BadAnswer: Sendable, CustomStringConvertible {
        var response: String
        var message: String
        var description: String { message }
    }

    /// Errors about the answer call it an answer; a truncated one is refused.
    @Test(arguments: [
        BadAnswer(response: created("not sdp"), message: "SDP answer does not start with v=0"),
        BadAnswer(
            response: "HTTP/1.1 201 Created\r\nLocation: /whip/1\r\nContent-Length: 900\r\n\r\nv=0\r\n",
            message: "the WHIP endpoint closed the connection after 5 of the 900 body bytes it announced "
                + "(a truncated response)"),
        BadAnswer(
            response: created("v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"), message: "the answer accepts no video"),
        BadAnswer(
            response: "HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 5\r\n\r\nmoved",
            message: "WHIP endpoint answered 302: moved"),
    ])
    func unusableAnswersAreNamedAsSuch(_ test: BadAnswer) throws {
        let endpoint = try FakeHTTPEndpoint { _, _ in test.response }
        let client = try WHIPClient(url: "http://127.0.0.1:\(endpoint.port)/whip", profileLevelID: Self.profile)
        #expect {
            try client.connect(timeoutSeconds: 1)
        } throws: { error in
            (error as? MediaError)?.message == test.message
        }
        #expect(endpoint.requests.count == 1)
    }
}
