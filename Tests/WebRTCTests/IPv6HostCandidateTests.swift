// IPv6 and several addresses: host candidate priorities (RFC 8445 5.1.2.1),
// the addresses behind a wildcard (against iproute2's list), our WHIP client
// publishing to our endpoint over ::1 and aiortc viewing over ::1, frames
// equal to FFmpeg's decode.
import FormatConv
import Foundation
import MediaCore
import Synchronization
import TestSupport
import Testing

@testable import WebRTC

@Suite(.serialized)
struct IPv6HostCandidateTests {
    /// RFC 8445 5.1.2.1: priority = 2^24 × 126 (host) + 2^8 × local preference + (256 − 1), worked out by hand.
    @Test func prioritiesFollowTheFormulaAndDiffer() {
        let candidates = HostCandidate.ranked([("fd00::2", 5000), ("192.0.2.2", 5000), ("::1", 5002)])
        #expect(candidates.map(\.priority) == [2_130_706_431, 2_130_706_175, 2_130_705_919])
        #expect(
            candidates.map(\.description) == [
                "candidate:1 1 udp 2130706431 fd00::2 5000 typ host",
                "candidate:2 1 udp 2130706175 192.0.2.2 5000 typ host",
                "candidate:3 1 udp 2130705919 ::1 5002 typ host",
            ])
        #expect(HostCandidate.priority(localPreference: 0, component: 1) == 2_113_929_471)
    }

    /// The addresses of a wildcard are those `ip -o addr show up` lists (IPv6 link-local left out), each once;
    /// a numeric host is itself.
    @Test func aWildcardTakesEveryInterfaceAddress() throws {
        let listing = String(decoding: try runChecked("ip", ["-o", "addr", "show", "up"]), as: UTF8.self)
        var ipv4: Set<String> = []
        var ipv6: Set<String> = []
        for line in listing.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let index = fields.firstIndex(where: { $0 == "inet" || $0 == "inet6" }), index + 1 < fields.count
            else { continue }
            let address = String(fields[index + 1].split(separator: "/")[0])
            if fields[index] == "inet" {
                ipv4.insert(address)
            } else if !address.lowercased().hasPrefix("fe8") {
                ipv6.insert(address)
            }
        }
        #expect(Set(HostAddresses.addresses(for: "0.0.0.0")) == ipv4)
        let both = HostAddresses.addresses(for: "::")
        #expect(both.count == Set(both).count)
        #expect(Set(both) == ipv4.union(ipv6))
        #expect(HostAddresses.addresses(for: "::1") == ["::1"])
        #expect(HostAddresses.addresses(for: "127.0.0.1") == ["127.0.0.1"])
    }

    @Test func aHostThatIsNotNumericIsRefused() {
        #expect(throws: MediaError.self) { try WHEPServer(.init(host: "localhost")) }
        #expect(throws: MediaError.self) { try WHIPClient(url: "http://::1:80/live", profileLevelID: [66, 192, 30]) }
    }

    /// Our WHIP client publishes to our endpoint listening on ::1: the answer's one candidate is ::1 (c=IN IP6),
    /// the client offers ::1 and 127.0.0.1 with distinct priorities, ICE selects ::1, and what the endpoint
    /// received decodes to FFmpeg's frames of the clip.
    @Test func ourClientPublishesToOurEndpointOverIPv6() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 20, gop: 10)
        var assembler = AccessUnitAssembler(codec: .h264)
        let samples = (assembler.append(Array(try Data(contentsOf: URL(fileURLWithPath: input)))) + assembler.finish())
            .compactMap { if case .sample(let sample) = $0 { sample } else { nil } }
        var configuration = WHIPEndpoint.Configuration(host: "::1", path: "/live")
        configuration.handshakeTimeout = 60
        let endpoint = try WHIPEndpoint(configuration)
        defer { endpoint.close() }
        #expect(
            endpoint.core.hostCandidates.map(\.description) == [
                "candidate:1 1 udp 2130706431 ::1 \(endpoint.mediaPort) typ host"
            ])
        let publisher = IPv6Publisher(url: "http://[::1]:\(endpoint.httpPort)/live", samples: samples)
        var received: [CompressedSample] = []
        while let sample = try endpoint.nextSample(firstPublisherWithin: .seconds(60)) { received.append(sample) }
        let report = try publisher.wait(polling: endpoint).get()
        #expect(report.selected.hasPrefix("[::1]:"), "\(report.selected)")
        #expect(report.answer.contains("\r\nc=IN IP6 ::1\r\n"))
        let candidates = report.offer.split(separator: "\r\n").filter { $0.hasPrefix("a=candidate:") }
        #expect(candidates.count == 2)
        #expect(candidates.first?.contains(" 2130706431 ::1 ") == true, "\(candidates)")
        #expect(candidates.last?.contains(" 2130706175 127.0.0.1 ") == true, "\(candidates)")
        var writer = AnnexBWriter()
        var stream: [UInt8] = []
        for sample in received { stream += try writer.write(sample) }
        let expected = try ffmpegFrameMD5(path: input)
        #expect(expected.count == 20)
        #expect(try ffmpegFrameMD5(annexB: stream, codec: .h264, in: directory) == expected)
    }

    /// ICE + DTLS from POST to SRTP keys, our client to our endpoint, five times over 127.0.0.1 and over ::1 (the
    /// medians printed, not asserted: a figure, not a bound); every connect succeeds.
    @Test func connectTimesOverIPv4AndIPv6() throws {
        for host in ["127.0.0.1", "::1"] {
            var configuration = WHIPEndpoint.Configuration(host: host, path: "/live")
            configuration.handshakeTimeout = 60
            let endpoint = try WHIPEndpoint(configuration)
            defer { endpoint.close() }
            let url = "http://\(host.contains(":") ? "[\(host)]" : host):\(endpoint.httpPort)/live"
            var times: [Double] = []
            for _ in 0..<5 {
                let publisher = IPv6Publisher(url: url, samples: [])
                let report = try publisher.wait(polling: endpoint).get()
                times.append(report.connectSeconds)
            }
            let median = times.sorted()[2]
            print(
                "connect over \(host): median \(Int((median * 1000).rounded())) ms of \(times.map { Int(($0 * 1000).rounded()) })"
            )
        }
    }

    /// Chromium (the server's player page at http://[::1]:PORT/) plays every frame over ::1.
    @Test func chromiumViewsOverIPv6() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 50, gop: 25)
        let port = try freeTCPPort()
        let page = try WHEPPeerTests.runWithPeer(
            ["stream", "serve", "-i", input, "--whep", "[::1]:\(port)", "--linger", "2"],
            in: directory, peer: "whep_chromium.py", ["http://[::1]:\(port)/", "50", "40"], timeout: 60)
        #expect(page["status"] as? Int == 201, "\(page)")
        let inbound = try #require(page["inbound"] as? [String: Any], "\(page)")
        #expect(inbound["framesDecoded"] as? Int == 50)
    }

    /// aiortc (as a WHEP viewer) reaches `serve --whep [::1]:PORT`: every frame it decodes equals FFmpeg's decode
    /// of the file served (all but the last, which aiortc hands on only when a next one starts).
    @Test(
        .enabled(
            if: IPv6HostCandidateTests.hostHasGlobalIPv6Address(),
            "aiortc gathers no loopback candidates, so over IPv6 it needs a global IPv6 address on this host's own interface"
        ))
    func aiortcViewsOverIPv6() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 50, gop: 25)
        let port = try freeTCPPort()
        let received = try WHEPPeerTests.runWithPeer(
            ["stream", "serve", "-i", input, "--whep", "[::1]:\(port)", "--linger", "5"],
            in: directory, peer: "whep_aiortc.py", ["http://[::1]:\(port)/whep", "49", "20"])
        #expect(received["status"] as? Int == 201)
        let answer = try #require(received["answer"] as? String)
        #expect(answer.contains("\r\nc=IN IP6 ::1\r\n"))
        #expect(answer.contains(" 2130706431 ::1 "))
        #expect(received["deleteStatus"] as? Int == 200)
        let frames = try #require(received["frames"] as? [String])
        #expect(frames == Array(try ffmpegFrameMD5(path: input).prefix(49)))
    }
}

extension IPv6HostCandidateTests {
    /// Whether an interface of this host has a global IPv6 address (aiortc's candidates come from those).
    static func hostHasGlobalIPv6Address() -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8) else { return false }
        // Columns: address, index, prefix length, scope (00 global), flags, name.
        return text.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count >= 6 && fields[3] == "00" && fields[5] != "lo"
        }
    }
}

/// A WHIP client on a thread of its own publishing `samples` to `url`, then DELETE; what it offered, what it was
/// answered and the pair ICE selected.
final class IPv6Publisher: Sendable {
    struct Report: Sendable {
        var offer: String
        var answer: String
        var selected: String
        var candidateCount: Int
        var trickleStatus: Int?
        /// Seconds `connect` took (POST to SRTP keys).
        var connectSeconds: Double
    }
    private let outcome = Mutex<Result<Report, MediaError>?>(nil)

    init(url: String, samples: [CompressedSample], configure: @escaping @Sendable (WHIPClient) -> Void = { _ in }) {
        Thread { [self] in
            let result = Result { () throws(MediaError) -> Report in
                let client = try WHIPClient(url: url, profileLevelID: [0x42, 0xC0, 0x1E])
                configure(client)
                let start = ContinuousClock.now
                try client.connect(timeoutSeconds: 60)
                let took = ContinuousClock.now - start
                for sample in samples {
                    try client.send(sample)
                    try client.poll(timeoutMilliseconds: 5)
                }
                client.endStream()
                for _ in 0..<20 { try client.poll(timeoutMilliseconds: 5) }
                let report = Report(
                    offer: client.sentOffer ?? "", answer: client.receivedAnswer ?? "",
                    selected: client.peer?.selectedAddress?.description ?? "",
                    candidateCount: client.hostCandidates.count, trickleStatus: client.trickleStatus,
                    connectSeconds: Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18)
                _ = try client.finish()
                return report
            }
            outcome.withLock { $0 = result }
        }.start()
    }

    /// The outcome, waiting for the thread (up to about 120 s) while `endpoint` is polled (it answers the DELETE).
    func wait(polling endpoint: WHIPEndpoint) throws -> Result<Report, MediaError> {
        for _ in 0..<12_000 {
            if let result = outcome.withLock({ $0 }) { return result }
            try endpoint.poll(timeoutMilliseconds: 10)
        }
        throw ProcessError("the publisher did not finish")
    }
}

/// UDPAddress's IPv6 text is RFC 5952's (4.2: the longest run of zero groups as ::, the first of equal runs; a single
/// zero group kept).
@Test func ipv6AddressesPrintAsRFC5952Says() {
    let cases: [([UInt16], String)] = [
        ([0, 0, 0, 0, 0, 0, 0, 1], "::1"), ([0, 0, 0, 0, 0, 0, 0, 0], "::"),
        ([0xFD00, 0, 0, 0, 0, 0, 0, 2], "fd00::2"),
        ([0x2001, 0xDB8, 0, 1, 1, 1, 1, 1], "2001:db8:0:1:1:1:1:1"),
        ([0x2001, 0xDB8, 0, 0, 1, 0, 0, 1], "2001:db8::1:0:0:1"),
        ([0x2001, 0, 0, 1, 0, 0, 0, 1], "2001:0:0:1::1"), ([0xFE80, 0, 0, 0, 0, 0, 0, 0], "fe80::"),
    ]
    for (groups, text) in cases {
        let bytes = groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        #expect(UDPAddress(host: bytes, port: 1).hostText == text)
    }
}
