// The WHIP client under the ICE transport policy `all` with a TURN server (coturn on 127.0.0.1): when the endpoint
// never answers the host pair (a firewall in front of its media socket drops all but coturn's relayed datagrams)
// the checks fall back to the relay and the clip arrives bit-exact; and trickling with only the relay (UDP and TCP
// to coturn) arrives bit-exact. Time to first frame printed per cell.
import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import WebRTC

/// Counts what the endpoint's firewall dropped (it runs on the endpoint's thread).
final class DropCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var dropped = 0
    private var passed = 0
    func record(dropped drop: Bool) { lock.withLock { if drop { dropped += 1 } else { passed += 1 } } }
    var counts: (dropped: Int, passed: Int) { lock.withLock { (dropped, passed) } }
}

@Suite(.serialized)
struct WHIPRelayFallbackTests {
    /// coturn's relay ports here: below Linux's ephemeral range (32768–60999), where the client's host sockets are.
    static let relayPorts = 21000...21199

    static func firstFrameText(_ run: WHIPRelayTests.Run) -> String {
        guard let first = run.firstFrame else { return "none" }
        let milliseconds = Double(first.components.seconds) * 1000 + Double(first.components.attoseconds) / 1e15
        return String(format: "%.1f ms", milliseconds)
    }

    /// Policy `all`, the host pair dropped at the endpoint: the client's checks went over the host pair (dropped),
    /// then through the relay; the relay pair carries media, the endpoint saw coturn's relayed address, every
    /// access unit arrives and decodes to FFmpeg's frames of the clip.
    @Test func allPolicyFallsBackToTheRelayWhenTheHostPairNeverAnswers() throws {
        let server = try CoturnServer(extraArguments: [
            "--min-port=\(Self.relayPorts.lowerBound)", "--max-port=\(Self.relayPorts.upperBound)",
        ])
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let (path, sent) = try WHIPRelayTests.clip(frames: 20, in: directory)
        let counter = DropCounter()
        let run = try WHIPRelayTests.publish(
            sent, servers: [WHIPRelayTests.turn(server)], policy: .all
        ) { endpoint in
            endpoint.core.dropsDatagrams = { _, source in
                let drop = !Self.relayPorts.contains(Int(source.port))
                counter.record(dropped: drop)
                return drop
            }
        }
        print("WHIP policy all, host pair dropped → relay: first frame \(Self.firstFrameText(run))")
        let relayed = try #require(run.report.relayed)
        let candidates = run.report.offer.components(separatedBy: "\r\n").filter { $0.hasPrefix("a=candidate:") }
        #expect(candidates.filter { $0.contains(" typ host") }.count >= 1, "\(candidates)")
        #expect(candidates.filter { $0.contains(" typ relay ") }.count == 1, "\(candidates)")
        #expect(run.report.localType == "relay", "\(run.report.pairJSON)")
        #expect(run.report.local == relayed)
        #expect(run.endpointSaw == relayed)
        // The host checks reached the endpoint's socket and were dropped there.
        #expect(counter.counts.dropped >= 1)
        try WHIPRelayTests.expectBitExact(run, clip: path, frames: 20, in: directory)
    }

    /// Trickling (the offer without candidates, the relayed one PATCHed) and forced to the relay, over UDP and TCP
    /// to coturn: the relay pair carries media, the endpoint saw the relayed address, the clip arrives bit-exact.
    @Test(arguments: ["udp", "tcp"])
    func trickledRelayOnlyPublishesBitExact(transport: String) throws {
        let server = try CoturnServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let (path, sent) = try WHIPRelayTests.clip(frames: 20, in: directory)
        let run = try WHIPRelayTests.publish(
            sent, servers: [WHIPRelayTests.turn(server, transport: transport)], policy: .relay, trickles: true)
        print(
            "WHIP trickle + relay only (\(transport) to coturn) → our endpoint: first frame \(Self.firstFrameText(run))"
        )
        let relayed = try #require(run.report.relayed)
        #expect(!run.report.offer.contains("a=candidate"))
        #expect(run.report.localType == "relay", "\(run.report.pairJSON)")
        #expect(run.endpointSaw == relayed)
        try WHIPRelayTests.expectBitExact(run, clip: path, frames: 20, in: directory)
    }
}
