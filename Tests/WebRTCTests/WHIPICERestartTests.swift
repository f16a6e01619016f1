// The WHIP client's ICE restart against our endpoint: PATCH with new ice-ufrag and ice-pwd and If-Match "*", the
// endpoint's 200 with its new ones; the binding requests the endpoint reads use the new credentials from then on
// (read off its media socket), and every access unit, before and after, arrives bit-exact.
import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import WebRTC

/// The USERNAMEs of the binding requests the endpoint read, in order (recorded on the endpoint's thread).
final class RequestUsernames: @unchecked Sendable {
    private let lock = NSLock()
    private var names: [String] = []
    func record(_ datagram: [UInt8]) {
        guard let first = datagram.first, first < 4, let message = try? STUNMessage.parse(datagram),
            message.messageClass == .request, let username = message.username
        else { return }
        lock.withLock { names.append(username) }
    }
    var all: [String] { lock.withLock { names } }
}

@Suite(.serialized)
struct WHIPICERestartTests {
    /// Restarted after half the clip, over the host pair and forced to the relay through coturn: one restart, the
    /// client's ice-ufrag is new, the endpoint's binding requests switch from `E1:C1` to `E2:C2` (both ufrags new,
    /// no old one after the first new one), and all 20 access units (10 after the restart) arrive and decode to
    /// FFmpeg's frames.
    @Test(arguments: [false, true])
    func restartKeepsMediaAndUsesTheNewCredentials(relayed: Bool) throws {
        let server = relayed ? try CoturnServer() : nil
        defer { server?.stop() }
        let directory = try TemporaryDirectory()
        let (path, sent) = try WHIPRelayTests.clip(frames: 20, in: directory)
        let usernames = RequestUsernames()
        let run = try WHIPRelayTests.publish(
            sent, servers: server.map { [WHIPRelayTests.turn($0)] } ?? [], policy: relayed ? .relay : .all,
            options: .init(
                configure: { $0.consentInterval = 0.1 },
                midway: { (client) throws(MediaError) in try client.restartICE() })
        ) { endpoint in
            endpoint.core.dropsDatagrams = { datagram, _ in
                usernames.record(datagram)
                return false
            }
        }
        #expect(run.report.localType == (relayed ? "relay" : "host"), "\(run.report.pairJSON)")
        #expect(run.report.restarts == 1)
        let offered = run.report.offer.components(separatedBy: "\r\n").first { $0.hasPrefix("a=ice-ufrag:") }
        let oldClient = String(try #require(offered).dropFirst("a=ice-ufrag:".count))
        let newClient = run.report.iceUsernameFragment
        #expect(newClient != oldClient)
        let names = usernames.all
        let firstNewIndex = names.firstIndex { $0.hasSuffix(":" + newClient) }
        let firstNew = try #require(firstNewIndex, "\(names)")
        let oldEndpoint = String(names[0].prefix { $0 != ":" })
        let newEndpoint = String(names[firstNew].prefix { $0 != ":" })
        #expect(names[0] == "\(oldEndpoint):\(oldClient)")
        #expect(newEndpoint != oldEndpoint)
        #expect(names[..<firstNew].allSatisfy { $0 == "\(oldEndpoint):\(oldClient)" }, "\(names)")
        #expect(names[firstNew...].allSatisfy { $0 == "\(newEndpoint):\(newClient)" }, "\(names)")
        print("ICE restart: \(firstNew) binding requests before, \(names.count - firstNew) after with the new ufrags")
        try WHIPRelayTests.expectBitExact(run, clip: path, frames: 20, in: directory)
    }

    /// Before connecting there is nothing to restart: a clear error, nothing sent.
    @Test func restartBeforeConnectingIsRefused() throws {
        let client = try WHIPClient(url: "http://127.0.0.1:9/whip", profileLevelID: [0x42, 0xC0, 0x1E])
        do {
            try client.restartICE()
            Issue.record("restarted before connecting")
        } catch {
            #expect(error.message == "an ICE restart needs a connected publisher")
        }
        #expect(client.iceRestarts == 0)
    }
}
