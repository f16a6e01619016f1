import Foundation
import Testing

@testable import WebRTC

#if canImport(Glibc)
    import Glibc
#endif

/// Strangers cannot hold a WHEP/WHIP endpoint's slots: offers that never
/// start ICE are reclaimed at the handshake deadline and bounded per source
/// address, a half-open publisher is replaced by an authorised offer, and
/// idle HTTP connections are bounded per address, evicted for a newcomer
/// and closed at the head and body deadlines. Strangers use 127.0.0.2 and
/// up, the legitimate client 127.0.0.1.
struct WHEPEndpointSlotTests {
    typealias Client = LoopbackHTTPClient

    static func server(_ change: (inout WHEPServer.Configuration) -> Void = { _ in }) throws -> WHEPServer {
        var configuration = WHEPServer.Configuration()
        change(&configuration)
        let server = try WHEPServer(configuration)
        server.setLive(profileLevelID: [0x42, 0xC0, 0x1E])
        return server
    }

    /// Polls `server` until `done` or about `seconds` have passed; whether `done` held.
    static func poll(_ server: WHEPServer, upTo seconds: Double, until done: () -> Bool) throws -> Bool {
        for _ in 0..<Int(seconds * 50) {
            if done() { return true }
            try server.poll(timeoutMilliseconds: 20)
        }
        return done()
    }

    /// 16 offers from one stranger's address: 4 are taken (the bound on
    /// pending offers per address), 12 get 429, and a viewer from another
    /// address gets in at once.
    @Test func pendingOffersAreBoundedPerAddress() throws {
        let server = try Self.server { $0.handshakeTimeout = 120 }
        let statuses = try (0..<16).map { _ in try Client.exchange(server, Client.offer(), from: "127.0.0.2").status }
        #expect(statuses == Array(repeating: 201, count: 4) + Array(repeating: 429, count: 12))
        #expect(try Client.exchange(server, Client.offer()).status == 201)
        #expect(server.viewerCount == 5)
    }

    /// 16 fabricated offers from four addresses fill every viewer slot; a
    /// real viewer's offer from a fifth ends the oldest of the busiest
    /// address's and gets in at once; a stranger's next offer evicts another
    /// stranger's, never the real viewer's.
    @Test func fabricatedOffersDoNotLockOutAViewer() throws {
        let server = try Self.server { $0.handshakeTimeout = 120 }
        var ids: [String] = []
        for host in 2...5 {
            for _ in 0..<4 {
                let created = try Client.exchange(server, Client.offer(), from: "127.0.0.\(host)")
                ids.append(String(try #require(created.field("Location")).dropFirst("/whep/".count)))
            }
        }
        #expect(server.viewerCount == 16)
        let real = try Client.exchange(server, Client.offer())
        #expect(real.status == 201)
        let realID = String(try #require(real.field("Location")).dropFirst("/whep/".count))
        #expect(server.viewerCount == 16)
        #expect(server.allViewers.first { $0.id == ids[0] }?.isClosed == true, "the busiest address's oldest")
        #expect(try Client.exchange(server, Client.offer(), from: "127.0.0.2").status == 201)
        #expect(server.allViewers.first { $0.id == ids[4] }?.isClosed == true, "the busiest address's oldest")
        #expect(server.peers[realID] != nil)
        // Strangers keep offering: each evicts another stranger's (or gets
        // 429 at its own bound), never the real viewer's.
        var statuses: Set<Int> = []
        for _ in 0..<3 {
            for host in 2...5 {
                statuses.insert(try Client.exchange(server, Client.offer(), from: "127.0.0.\(host)").status)
            }
        }
        #expect(statuses.isSubset(of: [201, 429]))
        #expect(server.peers[realID] != nil && server.viewerCount == 16)
    }

    /// 16 fabricated offers from four addresses that never start ICE are
    /// ended at the handshake deadline, and a viewer then gets in.
    @Test func fabricatedOffersAreReclaimedAtTheHandshakeDeadline() throws {
        let server = try Self.server { $0.handshakeTimeout = 3 }
        var lines: [String] = []
        server.logObserver = { lines.append($0.message) }
        for host in 2...5 {
            for _ in 0..<4 {
                #expect(try Client.exchange(server, Client.offer(), from: "127.0.0.\(host)").status == 201)
            }
        }
        #expect(server.viewerCount == 16)
        #expect(try Self.poll(server, upTo: 10) { server.viewerCount == 0 })
        #expect(lines.filter { $0.contains("left: no ICE and DTLS handshake within 3.0 s") }.count == 16)
        #expect(try Client.exchange(server, Client.offer()).status == 201)
    }

    /// With a token, a stranger's WHIP offer gets 401 and holds nothing; a
    /// publisher that never completed ICE and DTLS is replaced by the next
    /// offer with the token.
    @Test func anAuthorisedPublisherReplacesAHalfOpenOne() throws {
        let server = try Self.server {
            $0.whipPath = "/live"
            $0.token = "pub-token"
            $0.handshakeTimeout = 120
        }
        let sdp = Offers.browser(direction: "sendonly")
        #expect(try Client.exchange(server, Client.offer("/live", sdp), from: "127.0.0.2").status == 401)
        #expect(server.publisherCount == 0)
        let authorization = ["Authorization: Bearer pub-token"]
        let first = try Client.exchange(server, Client.offer("/live", sdp, fields: authorization), from: "127.0.0.2")
        #expect(first.status == 201)
        let second = try Client.exchange(server, Client.offer("/live", sdp, fields: authorization))
        #expect(second.status == 201)
        #expect(server.publisherCount == 1)
        let firstID = try #require(first.field("Location")?.dropFirst("/live/".count))
        let replaced = try #require(server.allViewers.first { $0.id == firstID })
        #expect(
            replaced.state
                == .closed("replaced by a new offer from \(try #require(server.offerSources.values.first).source)"))
    }

    /// 8 strangers' addresses each open 9 idle connections (72, the 9th of
    /// each closed at once); a request from another address is still
    /// answered, and the server never holds more than 64.
    @Test func idleConnectionsFromOtherAddressesDoNotBlockARequest() throws {
        // Deadlines far off: only the bounds act here.
        let server = try Self.server { $0.requestHeadTimeout = 120 }
        var idle: [Int32] = []
        defer { for fd in idle { close(fd) } }
        for host in 2...9 {
            for _ in 0..<9 {
                idle.append(try Client.connect(to: server.httpPort, from: "127.0.0.\(host)"))
                try server.poll(timeoutMilliseconds: 0)
            }
        }
        _ = try Self.poll(server, upTo: 0.2) { false }
        #expect(server.connections.count == 64)
        #expect(server.refusedConnections == 8)
        let page = try Client.exchange(server, Client.request("GET", "/"))
        #expect(page.status == 200)
        #expect(server.connections.count == 63, "the newcomer evicted one stranger's connection and left")
        #expect(server.refusedConnections == 9)
    }

    /// A connection whose head does not end within the head deadline, or
    /// whose body does not come within the body deadline, is closed.
    @Test func slowHeadsAndBodiesAreClosedAtTheirDeadlines() throws {
        let server = try Self.server {
            $0.requestHeadTimeout = 1
            $0.requestBodyTimeout = 1
        }
        let slowHead = try Client.connect(to: server.httpPort, from: "127.0.0.2")
        defer { close(slowHead) }
        Client.send(slowHead, "POST /whep HTTP/1.1\r\nHost: x\r\n")
        let slowBody = try Client.connect(to: server.httpPort, from: "127.0.0.3")
        defer { close(slowBody) }
        Client.send(slowBody, "POST /whep HTTP/1.1\r\nContent-Type: application/sdp\r\nContent-Length: 100\r\n\r\nv=0")
        #expect(try Self.poll(server, upTo: 10) { server.connections.count == 2 })
        #expect(try Self.poll(server, upTo: 10) { server.connections.isEmpty })
        #expect(server.expiredConnections == 2)
        #expect(Client.isClosed(slowHead) && Client.isClosed(slowBody))
        #expect(server.viewerCount == 0)
    }
}
