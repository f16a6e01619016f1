import Foundation
import MediaCore
import Testing

@testable import WebRTC

/// Who may do what on a WHEP/WHIP endpoint: the bearer token on POST,
/// DELETE and PATCH (401 with `WWW-Authenticate: Bearer` otherwise),
/// unguessable session URLs, statistics that show a stranger counts only,
/// CORS on the endpoint's answers alone, and `HEAD /`.
struct WHEPEndpointAuthorizationTests {
    typealias Client = LoopbackHTTPClient
    static let token = "s3cr3t.T0ken-~+/="

    static func liveServer(token: String? = Self.token, whipPath: String? = nil) throws -> WHEPServer {
        var configuration = WHEPServer.Configuration()
        configuration.token = token
        configuration.whipPath = whipPath
        configuration.handshakeTimeout = 120  // sessions stay pending however slow the run
        let server = try WHEPServer(configuration)
        server.setLive(profileLevelID: [0x42, 0xC0, 0x1E])
        return server
    }

    static func location(_ response: Client.Response) throws -> String {
        try #require(response.field("Location"), "no Location in \(response.head)")
    }

    @Test func offersAndDeletesWithoutTheTokenGet401AndNoSession() throws {
        let server = try Self.liveServer()
        var lines: [String] = []
        server.logObserver = { lines.append($0.message) }
        let missing = try Client.exchange(server, Client.offer())
        #expect(missing.status == 401)
        #expect(missing.field("WWW-Authenticate") == "Bearer")
        let wrongs = ["Bearer s3cr3t.T0ken-~+/", "Bearer s3cr3t.T0ken-~+/==", "Basic czNjcjN0", "Bearer", "bearer  x"]
        for wrong in wrongs {
            let refused = try Client.exchange(server, Client.offer(fields: ["Authorization: \(wrong)"]))
            #expect(refused.status == 401, "\(wrong)")
            #expect(refused.field("WWW-Authenticate") == "Bearer error=\"invalid_token\"")
            #expect(!refused.body.contains("s3cr3t"))
        }
        #expect(server.viewerCount == 0)
        #expect(server.unauthorizedRequests == 1 + wrongs.count)

        // The scheme is case-insensitive (RFC 7235); more than one space may follow it.
        let created = try Client.exchange(server, Client.offer(fields: ["Authorization: bEaReR  \(Self.token)"]))
        #expect(created.status == 201)
        let location = try Self.location(created)
        #expect(server.viewerCount == 1)
        for fields in [[], ["Authorization: Bearer nope"]] {
            #expect(try Client.exchange(server, Client.request("DELETE", location, fields: fields)).status == 401)
            #expect(try Client.exchange(server, Client.request("PATCH", location, fields: fields)).status == 401)
        }
        #expect(server.viewerCount == 1)
        let deleted = try Client.exchange(
            server, Client.request("DELETE", location, fields: ["Authorization: Bearer \(Self.token)"]))
        #expect(deleted.status == 200)
        #expect(server.viewerCount == 0)
        #expect(lines.contains { $0.contains("sent DELETE from 127.0.0.1:") }, "\(lines)")
        #expect(!lines.contains { $0.contains("s3cr3t") }, "the token is never logged")
        #expect(lines.filter { $0.contains("refused: wrong token") }.count == wrongs.count + 2)
    }

    @Test func sessionURLsCarry128RandomBits() throws {
        let server = try Self.liveServer(token: nil)
        var ids: Set<String> = []
        for _ in 0..<3 {
            let created = try Client.exchange(server, Client.offer())
            #expect(created.status == 201)
            let id = String(try Self.location(created).dropFirst("/whep/".count))
            #expect(id.count == 32 && id.allSatisfy(\.isHexDigit), "\(id)")
            ids.insert(id)
        }
        #expect(ids.count == 3)
        // A URL one digit off ends nothing.
        let id = try #require(ids.first)
        let near = String(id.dropLast()) + (id.last == "0" ? "1" : "0")
        #expect(try Client.exchange(server, Client.request("DELETE", "/whep/" + near)).status == 404)
        #expect(server.viewerCount == 3)
    }

    /// A stranger's GET /whep/stats shows counts and no session id; the
    /// token's holder sees every session.
    @Test func statisticsShowAStrangerCountsOnly() throws {
        for token in [nil, Self.token] {
            let server = try Self.liveServer(token: token)
            let authorization = token.map { ["Authorization: Bearer \($0)"] } ?? []
            let created = try Client.exchange(server, Client.offer(fields: authorization))
            let id = String(try Self.location(created).dropFirst("/whep/".count))
            let stranger = try Client.exchange(server, Client.request("GET", "/whep/stats"))
            #expect(stranger.status == 200)
            #expect(stranger.field("Access-Control-Allow-Origin") == nil)
            #expect(!stranger.body.contains(id))
            let counts = try #require(
                try JSONSerialization.jsonObject(with: Data(stranger.body.utf8)) as? [String: Int], "\(stranger.body)")
            #expect(counts["viewers"] == 1 && counts["connectedViewers"] == 0)
            #expect(counts["publishers"] == 0 && counts["refusedOffers"] == 0)
            let admin = try Client.exchange(server, Client.request("GET", "/whep/stats", fields: authorization))
            #expect(admin.body.contains(id) == (token != nil))
            if token != nil {
                let wrong = try Client.exchange(
                    server, Client.request("GET", "/whep/stats", fields: ["Authorization: Bearer x"]))
                #expect(wrong.status == 401 && !wrong.body.contains(id))
            }
        }
    }

    /// The endpoint's answers carry CORS fields (a player on another origin
    /// POSTs, DELETEs and reads Location, and ETag and Link for trickle ICE); the page and the statistics do
    /// not, and HEAD / is GET / without the body.
    @Test func corsOnTheEndpointOnlyAndHeadOfThePage() throws {
        let server = try Self.liveServer(token: nil, whipPath: "/live")
        for path in ["/whep", "/live", "/whep/0123"] {
            let preflight = try Client.exchange(server, Client.request("OPTIONS", path))
            #expect(preflight.status == 204)
            #expect(preflight.field("Access-Control-Allow-Origin") == "*")
            #expect(preflight.field("Access-Control-Allow-Headers") == "Content-Type, Authorization, If-Match")
            #expect(preflight.field("Access-Control-Expose-Headers") == "Location, ETag, Link, Accept-Patch")
        }
        let created = try Client.exchange(server, Client.offer())
        #expect(created.status == 201 && created.field("Access-Control-Allow-Origin") == "*")
        let page = try Client.exchange(server, Client.request("GET", "/"))
        let head = try Client.exchange(server, Client.request("HEAD", "/"))
        #expect(page.status == 200 && head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.field("Content-Length") == String(page.body.utf8.count))
        #expect(head.field("Content-Type") == "text/html; charset=utf-8")
        for response in [page, head, try Client.exchange(server, Client.request("OPTIONS", "/whep/stats"))] {
            #expect(response.field("Access-Control-Allow-Origin") == nil)
        }
        #expect(try Client.exchange(server, Client.request("OPTIONS", "/elsewhere")).status == 404)
    }

    @Test func aTokenThatNoHeaderCanCarryIsRefused() throws {
        for token in ["", "two words", "=x", "tab\t"] {
            var configuration = WHEPServer.Configuration()
            configuration.token = token
            #expect(throws: MediaError.self) { _ = try WHEPServer(configuration) }
        }
    }
}
