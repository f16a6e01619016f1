// ICE servers in Link fields (RFC 9725 4.6, RFC 8288): the exact bytes the
// endpoints write on a 201 and an OPTIONS, the `--ice-server` option, and the
// client's parser of Link fields.
import Foundation
import MediaCore
import Testing

@testable import WebRTC

struct ICEServerLinkTests {
    typealias Client = LoopbackHTTPClient

    /// The Link values of RFC 9725 4.6's example, byte for byte.
    @Test func linkValuesAreTheRFCsExample() throws {
        #expect(
            try ICEServer(option: "stun:stun.example.net").linkValue == "<stun:stun.example.net>; rel=\"ice-server\"")
        #expect(
            try ICEServer(option: "turn:turn.example.net?transport=udp,user,myPassword").linkValue
                == "<turn:turn.example.net?transport=udp>; rel=\"ice-server\"; username=\"user\"; "
                + "credential=\"myPassword\"; credential-type=\"password\"")
        for bad in [
            "http://example.net", "turn:turn.example.net", "stun:a b", "stun:x,user", "turn:x,user,",
            "turn:x,us\"er,pw", "turn:x,user,p\\w", "stun:<x>",
        ] {
            #expect(throws: MediaError.self, "\(bad)") { try ICEServer(option: bad) }
        }
    }

    /// The server's 201 and a non-preflight OPTIONS carry one Link field per server, exactly; a CORS preflight
    /// none.
    @Test func theEndpointAdvertisesItsServers() throws {
        var configuration = WHEPServer.Configuration()
        configuration.handshakeTimeout = 120
        configuration.iceServers = [
            try ICEServer(option: "stun:127.0.0.1:3478"),
            try ICEServer(option: "turn:127.0.0.1:3478?transport=udp,u1,p1"),
        ]
        let server = try WHEPServer(configuration)
        server.setLive(profileLevelID: [0x42, 0xC0, 0x1E])
        let expected = [
            "Link: <stun:127.0.0.1:3478>; rel=\"ice-server\"",
            "Link: <turn:127.0.0.1:3478?transport=udp>; rel=\"ice-server\"; username=\"u1\"; credential=\"p1\"; "
                + "credential-type=\"password\"",
        ]
        let created = try Client.exchange(server, Client.offer())
        #expect(created.status == 201)
        let lines = created.head.components(separatedBy: "\r\n")
        #expect(lines.filter { $0.hasPrefix("Link:") } == expected)
        let options = try Client.exchange(server, Client.request("OPTIONS", "/whep"))
        #expect(options.status == 204)
        #expect(options.head.components(separatedBy: "\r\n").filter { $0.hasPrefix("Link:") } == expected)
        let preflight = try Client.exchange(
            server, Client.request("OPTIONS", "/whep", fields: ["Access-Control-Request-Method: POST"]))
        #expect(preflight.status == 204)
        #expect(!preflight.head.contains("Link:"))
        // And the client's parser reads back what the server wrote.
        let response = try WHIPResponse.parse(Array((created.head + "\r\n\r\n" + created.body).utf8))
        #expect(
            ICEServer.parse(linkFields: response.linkFields) == [
                ICEServer(url: "stun:127.0.0.1:3478"),
                ICEServer(
                    url: "turn:127.0.0.1:3478?transport=udp", username: "u1", credential: "p1",
                    credentialType: "password"),
            ])
    }

    /// Several links in one field, several fields, quoted parameters with commas, semicolons and escapes, tokens,
    /// rel lists in any case; other relations and malformed links left out.
    @Test func theParserReadsEveryShape() {
        let fields = [
            "<stun:a.example>; rel=\"ice-server\", <https://example.net/doc>; rel=\"help\", "
                + "<turn:b.example?transport=tcp>; rel=ice-server; username=\"us,er\"; credential=\"p;a\\\"ss\"",
            "<turns:c.example>;REL=\"preload ICE-SERVER\";username=x;credential=y;credential-type=oauth",
            "no-brackets; rel=\"ice-server\", <stun:d.example> ; rel = \"ice-server\"",
            "<stun:e.example>; rel=\"ice-server\"; rel=\"other\"",
        ]
        #expect(
            ICEServer.parse(linkFields: fields) == [
                ICEServer(url: "stun:a.example"),
                ICEServer(url: "turn:b.example?transport=tcp", username: "us,er", credential: "p;a\"ss"),
                ICEServer(url: "turns:c.example", username: "x", credential: "y", credentialType: "oauth"),
                ICEServer(url: "stun:d.example"),
                ICEServer(url: "stun:e.example"),
            ])
        #expect(ICEServer.parse(linkFields: ["<stun:f.example>; rel=\"ice-server\"; username=\"unterminated"]).isEmpty)
    }

    /// Our client exposes what our endpoint advertised, and keeps its own `iceServers` apart.
    @Test func theClientExposesTheAdvertisedServers() throws {
        var configuration = WHIPEndpoint.Configuration(path: "/live")
        configuration.iceServers = [try ICEServer(option: "turn:127.0.0.1:3478?transport=udp,user,secret")]
        let endpoint = try WHIPEndpoint(configuration)
        defer { endpoint.close() }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var advertised: [ICEServer] = []
        let port = endpoint.httpPort
        Thread {
            if let client = try? WHIPClient(url: "http://127.0.0.1:\(port)/live", profileLevelID: [0x42, 0xC0, 0x1E]) {
                client.iceServers = [ICEServer(url: "stun:127.0.0.1:9")]
                try? client.connect(timeoutSeconds: 10)
                advertised = client.advertisedICEServers
                #expect(client.iceServers == [ICEServer(url: "stun:127.0.0.1:9")])
            }
            done.signal()
        }.start()
        while done.wait(timeout: .now()) == .timedOut { try endpoint.poll(timeoutMilliseconds: 10) }
        #expect(
            advertised == [
                ICEServer(
                    url: "turn:127.0.0.1:3478?transport=udp", username: "user", credential: "secret",
                    credentialType: "password")
            ])
    }
}
