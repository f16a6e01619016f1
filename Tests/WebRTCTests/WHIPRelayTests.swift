// The WHIP client through coturn's TURN relay on 127.0.0.1: forced to the relay it publishes bit-exact and the
// endpoint sees coturn's relayed address; a wrong TURN password names the server's 401; with the policy `all`
// the host pair carries media; a stun: server's server-reflexive address; ICE + DTLS to the first frame through the
// relay and host (p50, printed).
import FormatConv
import Foundation
import MediaCore
import RTPPayload
import TestSupport
import Testing

@testable import WebRTC

/// One publish's outcome, set by the publisher thread.
final class RelayedPublish: @unchecked Sendable {
    struct Report: Sendable {
        var ending: WHIPClient.Ending
        var pairJSON: String
        var localType: String?
        var local: String?
        var relayed: String?
        var offer: String
        var relayLifetimeAfterFinish: UInt32?
        /// The client's Refresh requests and channel rebindings that kept the allocation (before finish()).
        var refreshes = 0
        var bindingRefreshes = 0
        /// The client's ice-ufrag at the end (a new one after an ICE restart) and its restarts.
        var iceUsernameFragment = ""
        var restarts = 0
    }

    private let lock = NSLock()
    private var result: Result<Report, MediaError>?
    private var startedAt: ContinuousClock.Instant?

    func start() { lock.withLock { startedAt = .now } }
    var started: ContinuousClock.Instant? { lock.withLock { startedAt } }
    func set(_ result: Result<Report, MediaError>) { lock.withLock { self.result = result } }
    var outcome: Result<Report, MediaError>? { lock.withLock { result } }
}

@Suite(.serialized)
struct WHIPRelayTests {
    /// What one publish to a fresh WHIPEndpoint gave.
    struct Run {
        var received: [CompressedSample]
        var report: RelayedPublish.Report
        /// The session's `remoteAddress` in the endpoint's statistics while it was connected.
        var endpointSaw: String?
        /// From the start of `connect` to the endpoint's first access unit.
        var firstFrame: Duration?
    }

    static func clip(frames: Int, in directory: TemporaryDirectory) throws -> (String, [CompressedSample]) {
        let path = directory.path("clip.hevc")
        try HEVCMediaTests.hevcClip(path, frames: frames, gop: 10)
        return (path, try HEVCMediaTests.accessUnits(path))
    }

    /// All `frames` access units of the HEVC clip at `path` arrived in `run`, and they decode to FFmpeg's frames
    /// of the clip (framemd5).
    static func expectBitExact(
        _ run: Run, clip path: String, frames: Int, in directory: TemporaryDirectory,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(run.received.count == frames, sourceLocation: sourceLocation)
        let reference = try ffmpegFrameMD5(path: path)
        #expect(reference.count == frames, sourceLocation: sourceLocation)
        #expect(
            try ffmpegFrameMD5(annexB: try HEVCMediaTests.annexB(run.received), codec: .hevc, in: directory)
                == reference, sourceLocation: sourceLocation)
    }

    /// What else a publish does: the client's settings, a wait between access units, a step after the first half
    /// of them, and the endpoint's settings.
    struct Options: Sendable {
        var configure: (@Sendable (WHIPClient) -> Void)?
        var frameInterval: Duration = .zero
        var midway: (@Sendable (WHIPClient) throws(MediaError) -> Void)?
    }

    /// Publishes `sent` to a fresh WHIPEndpoint on 127.0.0.1 with `servers` and `policy`.
    static func publish(
        _ sent: [CompressedSample], servers: [ICEServer], policy: WHIPClient.ICETransportPolicy,
        advertised: [ICEServer] = [], trickles: Bool = false, options: Options = Options(),
        endpointSetup: (WHIPEndpoint) -> Void = { _ in }
    ) throws -> Run {
        let format = try VideoStreamFormat(sent[0].formatDescription)
        var configuration = WHIPEndpoint.Configuration(path: "/live")
        configuration.iceServers = advertised
        configuration.handshakeTimeout = 30
        let endpoint = try WHIPEndpoint(configuration)
        endpointSetup(endpoint)
        let port = endpoint.httpPort
        let publish = RelayedPublish()
        Thread {
            publish.set(
                Result { () throws(MediaError) -> RelayedPublish.Report in
                    let client = try WHIPClient(url: "http://127.0.0.1:\(port)/live", format: format)
                    client.iceServers = servers
                    client.iceTransportPolicy = policy
                    client.tricklesCandidates = trickles
                    options.configure?(client)
                    publish.start()
                    try client.connect(timeoutSeconds: 20)
                    for (index, sample) in sent.enumerated() {
                        if index == sent.count / 2 { try options.midway?(client) }
                        try client.send(sample)
                        try client.poll(timeoutMilliseconds: 5)
                        let next = ContinuousClock.now + options.frameInterval
                        while ContinuousClock.now < next { try client.poll(timeoutMilliseconds: 10) }
                    }
                    client.endStream()
                    for _ in 0..<40 { try client.poll(timeoutMilliseconds: 5) }
                    let pair = client.selectedPair
                    let report = RelayedPublish.Report(
                        ending: .noSessionURL, pairJSON: client.selectedPairJSON, localType: pair?.localType,
                        local: pair?.local, relayed: client.relay.map { "\($0.relayedAddress)" },
                        offer: client.sentOffer ?? "", refreshes: client.relayRefreshes,
                        bindingRefreshes: client.relayBindingRefreshes, iceUsernameFragment: client.iceUsernameFragment,
                        restarts: client.iceRestarts)
                    var finished = report
                    finished.ending = try client.finish()
                    finished.relayLifetimeAfterFinish = client.relay?.lifetime
                    return finished
                })
        }.start()
        let deadline = ContinuousClock.now + .seconds(60)
        var received: [CompressedSample] = []
        var endpointSaw: String?
        var firstFrame: Duration?
        while let sample = try endpoint.nextSample(
            firstPublisherWithin: .seconds(30),
            stopRequested: { ContinuousClock.now > deadline || publish.outcome.map { (try? $0.get()) == nil } == true })
        {
            if received.isEmpty, let started = publish.started { firstFrame = .now - started }
            received.append(sample)
            if endpointSaw == nil { endpointSaw = Self.remoteAddress(in: endpoint.statisticsJSON()) }
        }
        while publish.outcome == nil && ContinuousClock.now < deadline { try? endpoint.poll(timeoutMilliseconds: 10) }
        endpoint.close()
        let report = try #require(publish.outcome).get()
        return Run(received: received, report: report, endpointSaw: endpointSaw, firstFrame: firstFrame)
    }

    /// The first session's `remoteAddress` in the endpoint's statistics.
    static func remoteAddress(in json: String) -> String? {
        let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let sessions = object?["viewers"] as? [[String: Any]]
        return sessions?.first?["remoteAddress"] as? String
    }

    static func turn(_ server: CoturnServer, transport: String = "udp", password: String = "p") -> ICEServer {
        ICEServer(
            url: "turn:127.0.0.1:\(server.port)?transport=\(transport)", username: "u", credential: password,
            credentialType: "password")
    }

    /// Forced to the relay (over UDP or TCP to coturn): the offer has only a relayed candidate (type preference 0),
    /// every access unit arrives and decodes to FFmpeg's frames of the clip, the client says the relay pair carried
    /// media, and the endpoint saw coturn's relayed address (XOR-RELAYED-ADDRESS) as the publisher's.
    @Test(arguments: ["udp", "tcp"])
    func relayOnlyPublishesBitExact(transport: String) throws {
        let server = try CoturnServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let (path, sent) = try Self.clip(frames: 20, in: directory)
        let run = try Self.publish(sent, servers: [Self.turn(server, transport: transport)], policy: .relay)
        #expect([.deleted(status: 200), .deleted(status: 404)].contains(run.report.ending))
        let candidates = run.report.offer.components(separatedBy: "\r\n").filter { $0.hasPrefix("a=candidate:") }
        let relayed = try #require(run.report.relayed)
        #expect(candidates.count == 1, "\(candidates)")
        // 2^24 × 0 + 2^8 × 65535 + (256 − 1)
        #expect(candidates.first?.contains(" 1 udp 16777215 127.0.0.1 ") == true, "\(candidates)")
        let fields = (candidates.first ?? "").split(separator: " ").map(String.init)
        // candidate:F 1 udp PRIORITY HOST PORT typ relay raddr HOST rport PORT
        #expect(fields.count == 12, "\(fields)")
        if fields.count == 12 {
            #expect("\(fields[4]):\(fields[5])" == relayed)
            #expect(Array(fields[6...8]) + [fields[10]] == ["typ", "relay", "raddr", "rport"])
        }
        #expect(run.report.localType == "relay", "\(run.report.pairJSON)")
        #expect(run.report.local == relayed)
        #expect(run.endpointSaw == relayed)
        #expect(run.received.count == sent.count)
        // finish() released the allocation: coturn granted lifetime 0.
        #expect(run.report.relayLifetimeAfterFinish == 0)
        try WHIPRelayTests.expectBitExact(run, clip: path, frames: 20, in: directory)
    }

    /// A wrong TURN password: connect fails before the offer with the TURN server's 401.
    @Test func wrongTURNPasswordNamesTheServers401() throws {
        let server = try CoturnServer()
        defer { server.stop() }
        let client = try WHIPClient(url: "http://127.0.0.1:9/whip", profileLevelID: [0x42, 0xC0, 0x1E])
        client.iceServers = [Self.turn(server, password: "wrong")]
        client.iceTransportPolicy = .relay
        do {
            try client.connect(timeoutSeconds: 5)
            Issue.record("connected with a wrong TURN password")
        } catch {
            #expect(
                error.message.contains("TURN server turn:127.0.0.1:\(server.port)?transport=udp: "), "\(error.message)")
            #expect(error.message.contains("TURN Allocate failed: 401 Unauthorized"), "\(error.message)")
        }
        #expect(client.sentOffer == nil)
    }

    /// The relay policy without a TURN server given or advertised is refused once the 201 came; a stuns: server
    /// (STUN over TLS) before the offer.
    @Test func relayPolicyNeedsATURNServer() throws {
        let answer = WHIPClientSignallingTests.answer(candidates: [(host: "127.0.0.1", port: 9)])
        let fake = try FakeHTTPEndpoint { _, _ in WHIPClientSignallingTests.created(answer) }
        let relayOnly = try WHIPClient(url: "http://127.0.0.1:\(fake.port)/whip", profileLevelID: [0x42, 0xC0, 0x1E])
        relayOnly.iceTransportPolicy = .relay
        do {
            try relayOnly.connect(timeoutSeconds: 1)
            Issue.record("connected without a TURN server")
        } catch {
            #expect(
                error.message
                    == "the relay transport policy needs a turn: ICE server (none given, none advertised by the endpoint)"
            )
        }
        // No host address in an offer that may only use a relay.
        #expect(relayOnly.sentOffer?.contains("c=IN IP4 0.0.0.0\r\n") == true)
        #expect(relayOnly.sentOffer?.contains("a=candidate") == false)
        let client = try WHIPClient(url: "http://127.0.0.1:9/whip", profileLevelID: [0x42, 0xC0, 0x1E])
        client.iceTransportPolicy = .relay
        client.iceServers = [ICEServer(url: "stuns:127.0.0.1:5349", username: "u", credential: "p")]
        do {
            try client.connect(timeoutSeconds: 1)
            Issue.record("connected through stuns:")
        } catch {
            #expect(error.message == "ICE server stuns:127.0.0.1:5349: STUN over TLS (stuns:) is not supported")
        }
        #expect(client.sentOffer == nil)
    }

    /// Forced to the relay with no TURN server of its own, the client allocates on the one the endpoint advertised
    /// in its 201 (`Link: <turn:…>; rel="ice-server"` with credentials), with and without trickle (the PATCH then
    /// carries the relayed candidate): every access unit arrives and the endpoint saw the relayed address.
    @Test(arguments: [false, true])
    func relaysThroughTheAdvertisedServer(trickles: Bool) throws {
        let server = try CoturnServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let (_, sent) = try Self.clip(frames: 10, in: directory)
        let run = try Self.publish(
            sent, servers: [], policy: .relay, advertised: [Self.turn(server)], trickles: trickles)
        let relayed = try #require(run.report.relayed)
        #expect(run.report.localType == "relay", "\(run.report.pairJSON)")
        #expect(run.endpointSaw == relayed)
        #expect(run.received.count == sent.count)
        #expect(!run.report.offer.contains("a=candidate"))
    }

    /// With the policy `all` and a TURN server: the offer has the host candidate(s) and the relayed one, and the
    /// host pair carries media (the endpoint saw the client's host address).
    @Test func allPolicyPrefersTheHostPair() throws {
        let server = try CoturnServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let (_, sent) = try Self.clip(frames: 10, in: directory)
        let run = try Self.publish(sent, servers: [Self.turn(server)], policy: .all)
        let candidates = run.report.offer.components(separatedBy: "\r\n").filter { $0.hasPrefix("a=candidate:") }
        #expect(candidates.filter { $0.contains(" typ host") }.count >= 1, "\(candidates)")
        #expect(candidates.filter { $0.contains(" typ relay ") }.count == 1, "\(candidates)")
        #expect(run.report.localType == "host", "\(run.report.pairJSON)")
        #expect(run.endpointSaw == run.report.local)
        #expect(run.endpointSaw != run.report.relayed)
        #expect(run.received.count == sent.count)
    }

    /// ICE + DTLS to the first frame through the relay and over the host pair: p50 of 5 each, printed (the issue's
    /// target is 300 ms through a loopback relay); no assertion on the durations.
    @Test func timeToFirstFrameThroughTheRelay() throws {
        let server = try CoturnServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let (_, sent) = try Self.clip(frames: 5, in: directory)
        var figures: [String: [Double]] = [:]
        for policy in [WHIPClient.ICETransportPolicy.relay, .all] {
            for _ in 0..<5 {
                let run = try Self.publish(sent, servers: [Self.turn(server)], policy: policy)
                #expect(run.received.count == sent.count)
                if let first = run.firstFrame {
                    figures[policy.rawValue, default: []].append(
                        Double(first.components.attoseconds) / 1e15
                            + Double(first.components.seconds) * 1000)
                }
            }
        }
        for (policy, values) in figures.sorted(by: { $0.key > $1.key }) {
            let sorted = values.sorted()
            let median = sorted[sorted.count / 2]
            print(
                "WHIP ICE+DTLS to first frame, policy \(policy): p50 \(String(format: "%.1f", median)) ms over \(sorted.count) (\(sorted.map { String(format: "%.1f", $0) }.joined(separator: ", ")))"
            )
        }
        #expect(figures["relay"]?.count == 5)
    }

    /// A stun: server (coturn on 127.0.0.1) sees the media socket's own address on loopback, so no server-reflexive
    /// candidate is offered; one the server saw elsewhere (as behind a NAT) is offered with type preference 100.
    @Test func serverReflexiveCandidateOnlyWhenItDiffers() throws {
        let server = try CoturnServer()
        defer { server.stop() }
        let client = try WHIPClient(url: "http://127.0.0.1:9/whip", profileLevelID: [0x42, 0xC0, 0x1E])
        client.iceServers = [ICEServer(url: "stun:127.0.0.1:\(server.port)")]
        try client.learnServerReflexiveAddress(timeoutSeconds: 2)
        #expect(client.serverReflexiveAddress == client.sockets[0].address)
        #expect(!client.offer.contains(" typ srflx "))
        client.serverReflexiveAddress = UDPAddress(host: [127, 0, 0, 1], port: 1)
        let socket = client.sockets[0].address
        let line = client.offer.components(separatedBy: "\r\n").first { $0.contains(" typ srflx ") }
        // 2^24 × 100 + 2^8 × 65535 + (256 − 1)
        #expect(
            line?.hasSuffix(
                " 1 udp 1694498815 127.0.0.1 1 typ srflx raddr \(socket.hostText) rport \(socket.port)") == true,
            "\(line ?? "none")")
    }
}
