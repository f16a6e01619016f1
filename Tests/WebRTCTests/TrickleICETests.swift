// Trickle ICE over PATCH (RFC 9725 4.3, RFC 8840): the fragment read as the
// RFC's example says, a session's PATCH answered (204, 200 for a restart,
// 401/404/412/413/415/400), and our client trickling to our endpoint.
import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import WebRTC

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.serialized)
struct TrickleICETests {
    typealias Client = LoopbackHTTPClient
    static let token = "s3cr3t.T0ken-~+/="
    static let fragmentType = "Content-Type: application/trickle-ice-sdpfrag"

    /// RFC 9725 4.3.2's example body: two UDP host candidates taken, the two TCP ones left out.
    @Test func theRFCExampleFragmentIsRead() throws {
        let text =
            [
                "a=ice-ufrag:EsAw", "a=ice-pwd:P2uYro0UCOQ4zxjKXaWCBui1", "m=audio 9 RTP/AVP 0", "a=mid:0",
                "a=candidate:1387637174 1 udp 2122260223 192.0.2.1 61764 typ host generation 0 ufrag EsAw network-id 1",
                "a=candidate:3471623853 1 udp 2122194687 198.51.100.1 61765 typ host generation 0 ufrag EsAw network-id 2",
                "a=candidate:473322822 1 tcp 1518280447 192.0.2.1 9 typ host tcptype active generation 0 ufrag EsAw network-id 1",
                "a=candidate:2154773085 1 tcp 1518214911 198.51.100.2 9 typ host tcptype active generation 0 ufrag EsAw network-id 2",
                "a=end-of-candidates",
            ].joined(separator: "\r\n") + "\r\n"
        let fragment = try TrickleFragment(parsing: text)
        #expect(fragment.usernameFragment == "EsAw")
        #expect(fragment.password == "P2uYro0UCOQ4zxjKXaWCBui1")
        #expect(fragment.mids == ["0"])
        #expect(
            fragment.candidates == [
                UDPAddress(host: [192, 0, 2, 1], port: 61764), UDPAddress(host: [198, 51, 100, 1], port: 61765),
            ])
        #expect(fragment.candidatesLeftOut == 2)
        #expect(fragment.endOfCandidates)
        let v6 = try TrickleFragment(parsing: "a=candidate:2 1 UDP 2130706431 fd00::2 5000 typ host\n")
        #expect(v6.candidates == [UDPAddress(host: [0xFD, 0] + [UInt8](repeating: 0, count: 13) + [2], port: 5000)])
        for bad in [
            "garbage\r\n", "a=candidate:1 1 udp 1 192.0.2.1 70000 typ host\r\n", "a=ice-ufrag:abcd\r\n",
            String(repeating: "a=candidate:1 1 udp 1 192.0.2.1 9 typ host\r\n", count: 33),
        ] {
            #expect(throws: MediaError.self, "\(bad.prefix(40))") { try TrickleFragment(parsing: bad) }
        }
    }

    static func liveServer() throws -> WHEPServer {
        var configuration = WHEPServer.Configuration()
        configuration.token = token
        configuration.handshakeTimeout = 120
        let server = try WHEPServer(configuration)
        server.setLive(profileLevelID: [0x42, 0xC0, 0x1E])
        return server
    }

    static func patch(_ location: String, _ body: String, token: String = Self.token, fields: [String] = [])
        -> String
    {
        Client.request(
            "PATCH", location, fields: ["Authorization: Bearer \(token)", fragmentType] + fields, body: body)
    }

    /// The 201 advertises PATCH and names the ICE session; candidates PATCHed with the token are recorded (204);
    /// a stranger's token gets 401 and changes nothing; another ICE session 412; a bad body 415/413/400; an unknown
    /// session 404.
    @Test func patchAddsCandidatesOnlyWithTheTokenAndTheSessionsCredentials() throws {
        let server = try Self.liveServer()
        let created = try Client.exchange(server, Client.offer(fields: ["Authorization: Bearer \(Self.token)"]))
        #expect(created.status == 201)
        #expect(created.field("Accept-Patch") == "application/trickle-ice-sdpfrag")
        let location = try #require(created.field("Location"))
        let id = String(location.dropFirst("/whep/".count))
        let tag = try #require(created.field("ETag"))
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && tag.count > 2)
        #expect(server.entityTag(of: id) == tag)
        let credentials = "a=ice-ufrag:Hx4f\r\na=ice-pwd:q9ZkU2m1LxJ4rN0vPb7YcT3e\r\n"
        let candidate =
            "m=video 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:0\r\na=candidate:1 1 udp 2130706431 127.0.0.1 40000 typ host\r\n"

        let stranger = try Client.exchange(server, Self.patch(location, credentials + candidate, token: "someone.else"))
        #expect(stranger.status == 401)
        #expect(server.trickledCandidates(of: id)?.candidates == [])

        let taken = try Client.exchange(
            server,
            Self.patch(location, credentials + candidate + "a=end-of-candidates\r\n", fields: ["If-Match: \(tag)"]))
        #expect(taken.status == 204)
        #expect(taken.body.isEmpty)
        let recorded = try #require(server.trickledCandidates(of: id))
        #expect(recorded.candidates == [UDPAddress(host: [127, 0, 0, 1], port: 40000)])
        #expect(recorded.endOfCandidates)

        let otherSession = try Client.exchange(server, Self.patch(location, candidate, fields: ["If-Match: \"other\""]))
        #expect(otherSession.status == 412)
        let otherCredentials = try Client.exchange(
            server, Self.patch(location, "a=ice-ufrag:zzzz\r\na=ice-pwd:zzzzzzzzzzzzzzzzzzzzzzzz\r\n" + candidate))
        #expect(otherCredentials.status == 412)
        let plain = Client.request(
            "PATCH", location, fields: ["Authorization: Bearer \(Self.token)", "Content-Type: application/sdp"],
            body: candidate)
        #expect(try Client.exchange(server, plain).status == 415)
        let big = String(repeating: "a=x\r\n", count: 4000)
        #expect(try Client.exchange(server, Self.patch(location, big)).status == 413)
        #expect(try Client.exchange(server, Self.patch(location, "nonsense\r\n")).status == 400)
        #expect(try Client.exchange(server, Self.patch("/whep/unknown", candidate)).status == 404)
        #expect(server.trickledCandidates(of: id)?.candidates.count == 1, "nothing refused was recorded")
        // 32 candidates a PATCH (the fragment's bound), 64 a session: a PATCH that would pass 64 is refused whole.
        for (round, (count, expected)) in [(32, 204), (32, 400), (31, 204)].enumerated() {
            let lines = (0..<count).map { "a=candidate:1 1 udp 1 127.0.0.1 \(41000 + round * 32 + $0) typ host\r\n" }
            #expect(try Client.exchange(server, Self.patch(location, lines.joined())).status == expected, "\(round)")
        }
        #expect(server.trickledCandidates(of: id)?.candidates.count == 64)
    }

    /// `If-Match: *` with new credentials restarts ICE: 200 with our new ice-ufrag and ice-pwd (ice-lite) and a new
    /// ETag; checks with the old username are then ignored.
    @Test func anICERestartAnswersNewCredentials() throws {
        let server = try Self.liveServer()
        let created = try Client.exchange(server, Client.offer(fields: ["Authorization: Bearer \(Self.token)"]))
        let location = try #require(created.field("Location"))
        let id = String(location.dropFirst("/whep/".count))
        let before = try #require(server.peers[id]).ice.localUsernameFragment
        let restart = try Client.exchange(
            server,
            Self.patch(
                location, "a=ice-ufrag:N3wU\r\na=ice-pwd:n3wPasswordOf24Chars0000\r\n", fields: ["If-Match: *"]))
        #expect(restart.status == 200)
        #expect(restart.field("Content-Type") == "application/trickle-ice-sdpfrag")
        let newTag = try #require(restart.field("ETag"))
        #expect(newTag != created.field("ETag"))
        let answer = try TrickleFragment(parsing: restart.body)
        #expect(answer.iceLite)
        let ufrag = try #require(answer.usernameFragment)
        #expect(ufrag != before && ufrag.count == 8 && answer.password?.count == 24)
        let peer = try #require(server.peers[id])
        #expect(peer.ice.localUsernameFragment == ufrag)
        #expect(peer.ice.remoteUsernameFragment == "N3wU")
        #expect(server.peersByUsername[before] == nil && server.peersByUsername[ufrag] === peer)
        #expect(server.entityTag(of: id) == newTag)

        // Over UDP: a check with the new credentials is answered (signed with the new password), one with the old
        // username is not.
        let newPassword = try #require(answer.password)
        let socket = try WHIPClientSignallingTests.loopbackSocket("127.0.0.1")
        defer { close(socket.fd) }
        let oldCheck = ICELiteAgentTests.request(username: "\(before):Hx4f", key: newPassword)
        let newCheck = ICELiteAgentTests.request(username: "\(ufrag):N3wU", key: newPassword)
        var replies: [[[UInt8]]] = []
        for check in [oldCheck, newCheck] {
            _ = sendto(socket.fd, check, server.mediaPort)
            for _ in 0..<10 { try server.poll(timeoutMilliseconds: 10) }
            replies.append(WHIPClientSignallingTests.drain(socket.fd))
        }
        #expect(replies[0].isEmpty, "the old username routes nowhere")
        let response = try STUNMessage.parse(try #require(replies[1].first))
        #expect(response.messageClass == .successResponse)
        #expect(response.verifyIntegrity(key: Array(newPassword.utf8)))
    }

    /// Sends `datagram` from `fd` to 127.0.0.1:`port`.
    private func sendto(_ fd: Int32, _ datagram: [UInt8], _ port: Int) -> Int {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return datagram.withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// Our client POSTs its offer without candidates, PATCHes them (204), and the endpoint records what the
    /// client offers; the publish decodes to FFmpeg's frames of the clip.
    @Test func ourClientTricklesToOurEndpoint() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 20, gop: 10)
        var assembler = AccessUnitAssembler(codec: .h264)
        let samples = (assembler.append(Array(try Data(contentsOf: URL(fileURLWithPath: input)))) + assembler.finish())
            .compactMap { if case .sample(let sample) = $0 { sample } else { nil } }
        var configuration = WHIPEndpoint.Configuration(path: "/live")
        configuration.handshakeTimeout = 60
        let endpoint = try WHIPEndpoint(configuration)
        defer { endpoint.close() }
        var trickled: [UDPAddress] = []
        let publisher = IPv6Publisher(url: "http://127.0.0.1:\(endpoint.httpPort)/live", samples: samples) {
            $0.tricklesCandidates = true
        }
        var received: [CompressedSample] = []
        while let sample = try endpoint.nextSample(firstPublisherWithin: .seconds(60)) {
            if trickled.isEmpty, let id = endpoint.core.peers.keys.first {
                trickled = endpoint.core.trickledCandidates(of: id)?.candidates ?? []
            }
            received.append(sample)
        }
        let report = try publisher.wait(polling: endpoint).get()
        #expect(!report.offer.contains("a=candidate:"))
        #expect(!report.offer.contains("a=end-of-candidates"))
        #expect(report.trickleStatus == 204)
        #expect(trickled.first == UDPAddress(host: [127, 0, 0, 1], port: trickled.first?.port ?? 0))
        #expect(trickled.count == report.candidateCount)
        var writer = AnnexBWriter()
        var stream: [UInt8] = []
        for sample in received { stream += try writer.write(sample) }
        #expect(try ffmpegFrameMD5(annexB: stream, codec: .h264, in: directory) == ffmpegFrameMD5(path: input))
    }

    /// Headless Chromium POSTs its offer without candidates and PATCHes the ones it gathers (its own fragment,
    /// If-Match with our ETag) to `codecs stream receive whip://…`: 204, and every frame it says it sent is
    /// received and decodes. (Its host candidates are mDNS names, which the endpoint leaves out; it is ICE-lite,
    /// so Chromium's checks find it anyway.)
    @Test func chromiumTricklesToOurEndpoint() throws {
        let directory = try TemporaryDirectory()
        let port = try freeTCPPort()
        let output = directory.path("received.h264")
        let statsPath = directory.path("stats.json")
        let published = try WHEPPeerTests.runWithPeer(
            WHEPPeerTests.whipReceive(port: port, output: output, stats: statsPath), in: directory,
            peer: "whip_chromium_trickle.py", ["http://127.0.0.1:\(port)/", "/live", "3"])
        let start = try #require(published["start"] as? [String: Any], "\(published)")
        #expect(start["status"] as? Int == 201, "\(published)")
        #expect(start["acceptPatch"] as? String == "application/trickle-ice-sdpfrag")
        #expect((start["etag"] as? String)?.hasPrefix("\"") == true)
        #expect(start["offerHasCandidates"] as? Bool == false)
        #expect(start["patchStatus"] as? Int == 204, "\(start)")
        #expect((start["candidates"] as? Int ?? 0) > 0)
        let stop = try #require(published["stop"] as? [String: Any], "\(published)")
        #expect(stop["deleteStatus"] as? Int == 200)
        let framesSent = try #require((stop["outbound"] as? [String: Any])?["framesSent"] as? Int)
        #expect(framesSent > 30)
        #expect(try WHEPPeerTests.stats(statsPath)["samplesReceived"] as? Int == framesSent)
        #expect(try ffmpegFrameMD5(path: output).count == framesSent)
    }
}
