// The WHIP client's ICE checks as an RFC 8445 checklist: pair priorities (6.1.2.3) computed here from the candidate
// lines of the offer and the answer, the checks' order on the wire as the endpoint saw them, the relay pair checked
// one Ta after the host pairs when the host pairs never answer, and the schedule's order on a fake clock.
import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import WebRTC

/// What the endpoint's firewall saw (binding requests' sources, in order) and the client's checklist.
final class ChecklistRecord: @unchecked Sendable {
    private let lock = NSLock()
    private var sources: [UDPAddress] = []
    private var client: (pairs: [ICECheckSchedule.Pair], answer: String, nominated: ICECheckSchedule.Pair?)?
    func request(from source: UDPAddress) { lock.withLock { sources.append(source) } }
    var requestSources: [UDPAddress] { lock.withLock { sources } }
    func capture(_ whip: WHIPClient) {
        lock.withLock {
            client = (whip.checks?.pairs ?? [], whip.receivedAnswer ?? "", whip.peer?.nominatedPair)
        }
    }
    var captured: (pairs: [ICECheckSchedule.Pair], answer: String, nominated: ICECheckSchedule.Pair?)? {
        lock.withLock { client }
    }
}

@Suite(.serialized)
struct ICEChecklistTests {
    /// One `a=candidate` line's priority, address (as `UDPAddress` prints one) and type.
    static func candidates(in sdp: String) -> [(priority: UInt64, address: String, type: String)] {
        sdp.components(separatedBy: "\r\n").filter { $0.hasPrefix("a=candidate:") }.map { line in
            let fields = line.split(separator: " ").map(String.init)
            let address = fields[4].contains(":") ? "[\(fields[4])]:\(fields[5])" : "\(fields[4]):\(fields[5])"
            return (UInt64(fields[3])!, address, fields[7])
        }
    }

    /// RFC 8445 6.1.2.3 with G our (controlling) candidate's priority and D the endpoint's, written out here.
    static func expectedPairs(offer: String, answer: String) -> [(local: String, remote: String, priority: UInt64)] {
        var pairs: [(local: String, remote: String, priority: UInt64)] = []
        for local in candidates(in: offer) {
            for remote in candidates(in: answer) where local.address.hasPrefix("[") == remote.address.hasPrefix("[") {
                let (g, d) = (local.priority, remote.priority)
                let priority = 4_294_967_296 * Swift.min(g, d) + 2 * Swift.max(g, d) + (g > d ? 1 : 0)
                pairs.append((local.address, remote.address, priority))
            }
        }
        return pairs.sorted { $0.priority > $1.priority }
    }

    /// Publishes 20 HEVC frames with the policy `all` and coturn's relayed candidate; `blocksHost` drops at the
    /// endpoint all but coturn's relayed datagrams. Every binding request's source is recorded in order.
    static func publish(blocksHost: Bool) throws -> (WHIPRelayTests.Run, ChecklistRecord, [CompressedSample], String) {
        let relayPorts = WHIPRelayFallbackTests.relayPorts
        let server = try CoturnServer(extraArguments: [
            "--min-port=\(relayPorts.lowerBound)", "--max-port=\(relayPorts.upperBound)",
        ])
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let (path, sent) = try WHIPRelayTests.clip(frames: 20, in: directory)
        let record = ChecklistRecord()
        let run = try WHIPRelayTests.publish(
            sent, servers: [WHIPRelayTests.turn(server)], policy: .all,
            options: .init(midway: { record.capture($0) })
        ) { endpoint in
            endpoint.core.dropsDatagrams = { datagram, source in
                if datagram.count >= 20, datagram[0] == 0, datagram[1] == 1 { record.request(from: source) }
                return blocksHost && !relayPorts.contains(Int(source.port))
            }
        }
        try WHIPRelayTests.expectBitExact(run, clip: path, frames: 20, in: directory)
        return (run, record, sent, run.report.offer)
    }

    /// The checklist's pairs and their priorities equal RFC 8445's formula over the offer's and the answer's
    /// candidate lines (exact integers, highest first); the endpoint saw the first checks from the pairs' local
    /// candidates in that order; the host pair answered first and carries media.
    @Test func pairPrioritiesAndCheckOrderFollowRFC8445() throws {
        let (run, record, sent, offer) = try Self.publish(blocksHost: false)
        print(
            "WHIP checklist, policy all, host pair answers: first frame \(WHIPRelayFallbackTests.firstFrameText(run))")
        let captured = try #require(record.captured)
        let expected = Self.expectedPairs(offer: offer, answer: captured.answer)
        #expect(expected.count >= 2, "\(offer)\n\(captured.answer)")
        #expect(Set(expected.map(\.priority)).count == expected.count, "no two pairs of one priority")
        #expect(
            captured.pairs.map { "\($0.local.base) \($0.remote) \($0.priority)" }
                == expected.map {
                    "\($0.local) \($0.remote) \($0.priority)"
                })
        // The highest pair's check went out first and succeeded first (aggressive nomination).
        #expect(record.requestSources.first.map { "\($0)" } == expected.first?.local)
        #expect(
            captured.nominated.map { "\($0.local.base) \($0.remote)" }
                == expected.first.map { "\($0.local) \($0.remote)" })
        #expect(run.report.localType == "host", "\(run.report.pairJSON)")
        #expect(run.received.count == sent.count)
    }

    /// The host pairs never answer (the endpoint drops all but coturn's relayed datagrams): the endpoint saw one
    /// check per pair in pair-priority order, the relay pair's check among the first as many checks as there are
    /// pairs (one Ta after the host pairs', before any retransmission; a 1 s fallback delay would have let the
    /// host checks be retransmitted first), and the relay pair carries media, bit-exact.
    @Test func theRelayPairIsCheckedInTurnWhenTheHostPairsAreBlocked() throws {
        let (run, record, sent, offer) = try Self.publish(blocksHost: true)
        print(
            "WHIP checklist, policy all, host blocked → relay: first frame \(WHIPRelayFallbackTests.firstFrameText(run))"
        )
        let captured = try #require(record.captured)
        let expected = Self.expectedPairs(offer: offer, answer: captured.answer)
        let relayed = try #require(run.report.relayed)
        let sources = record.requestSources.map { "\($0)" }
        var firstSeen: [String] = []
        for source in sources where !firstSeen.contains(source) { firstSeen.append(source) }
        var expectedLocals: [String] = []
        for pair in expected where !expectedLocals.contains(pair.local) { expectedLocals.append(pair.local) }
        #expect(firstSeen == expectedLocals, "\(sources)")
        let relayIndex = try #require(sources.firstIndex(of: relayed), "\(sources)")
        #expect(relayIndex < expected.count, "\(sources)")
        #expect(run.report.localType == "relay", "\(run.report.pairJSON)")
        #expect(run.endpointSaw == relayed)
        #expect(run.received.count == sent.count)
    }

    /// The schedule on a fake clock: pairs formed per family, ordered by RFC 8445's priority (worked out here),
    /// a new one every Ta (50 ms), the first ones retransmitted from 200 ms on; a server-reflexive candidate's
    /// pairs pruned in favour of its base's host pairs (6.1.2.4).
    @Test func theScheduleChecksPairsByPriorityEveryTa() {
        let host4 = UDPAddress(host: [127, 0, 0, 1], port: 40000)
        let host6 = UDPAddress(host: Array(repeating: 0, count: 15) + [1], port: 40001)
        let relayed = UDPAddress(host: [127, 0, 0, 1], port: 21000)
        let (hostPriority, host6Priority, reflexive, relayPriority): (UInt32, UInt32, UInt32, UInt32) = (
            2_130_706_431, 2_130_706_175, 1_694_498_815, 16_777_215
        )
        var schedule = ICECheckSchedule(
            localCandidates: [
                .init(base: host4, priority: hostPriority, tag: 0), .init(base: host6, priority: host6Priority, tag: 1),
                .init(base: host4, priority: reflexive, tag: 0), .init(base: relayed, priority: relayPriority, tag: -1),
            ], deadline: 10)
        let remote4 = UDPAddress(host: [127, 0, 0, 1], port: 5000)
        let remote6 = UDPAddress(host: Array(repeating: 0, count: 15) + [1], port: 5001)
        schedule.add(remote6, priority: 2_130_706_175)
        schedule.add(remote4, priority: 2_130_706_431)
        // 2^32 × min + 2 × max + (G > D), worked out apart (Python's integers).
        let expected: [(UDPAddress, UDPAddress, UInt64)] = [
            (host4, remote4, 9_151_314_442_783_293_438),
            (host6, remote6, 9_151_313_343_271_665_150),
            (relayed, remote4, 72_057_594_004_373_502),
        ]
        #expect(
            schedule.pairs.map { "\($0.local.base) \($0.remote) \($0.priority)" }
                == expected.map { "\($0) \($1) \($2)" })
        #expect(schedule.prunedPairs == 1)
        var sent: [(Double, UDPAddress)] = []
        for millisecond in 0..<300 {
            let now = Double(millisecond) / 1000
            if let pair = schedule.nextPair(at: now) { sent.append((now, pair.local.base)) }
        }
        #expect(sent.map(\.0) == [0, 0.05, 0.1, 0.2, 0.25])
        #expect(sent.map(\.1) == [host4, host6, relayed, host4, host6])
    }
}
