// The WHIP client's allocation kept alive by Refresh requests, against a TURN server scripted here on 127.0.0.1
// that grants 2 s lifetimes and refuses (437) a Refresh that comes after the allocation expired.
import Foundation
import MediaCore
import Sockets
import TestSupport
import Testing

@testable import WebRTC

/// A TURN server on 127.0.0.1 for one client, written from RFC 8656: Allocate, Refresh, CreatePermission and
/// ChannelBind answered without authentication; every allocation and Refresh granted `lifetime` seconds; a Refresh
/// after the allocation's expiry answered 437 (Allocation Mismatch) and counted as late. Runs on its own thread.
final class ScriptedTURNServer: @unchecked Sendable {
    let socket: UDPSocket
    let lifetime: UInt32
    private let lock = NSLock()
    private var stopped = false
    private var refreshes = 0
    private var late = 0
    private var releases = 0
    private var expiry: ContinuousClock.Instant?
    private let done = DispatchSemaphore(value: 0)

    init(lifetime: UInt32) throws {
        socket = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        self.lifetime = lifetime
        Thread { self.serve() }.start()
    }

    var port: UInt16 { socket.localAddress.port }
    /// Refreshes granted (lifetime above 0), refused as late, and releases (lifetime 0).
    var counts: (refreshes: Int, late: Int, releases: Int) { lock.withLock { (refreshes, late, releases) } }

    func stop() {
        guard
            !lock.withLock({ () -> Bool in
                defer { stopped = true }; return stopped
            })
        else { return }
        done.wait()
        socket.close()
    }

    private func serve() {
        var buffer = [UInt8](repeating: 0, count: 2048)
        while !lock.withLock({ stopped }) {
            guard let (count, from) = try? socket.receive(into: &buffer, timeout: .milliseconds(20)),
                let request = try? STUNMessage.parse(Array(buffer[0..<count])), request.messageClass == .request
            else { continue }
            if let response = answer(request, from: from) { try? socket.send(response, to: from) }
        }
        done.signal()
    }

    private func answer(_ request: STUNMessage, from: SocketAddress) -> [UInt8]? {
        let id = request.transactionID
        var response = STUNMessage(method: request.method, messageClass: .successResponse, transactionID: id)
        let now = ContinuousClock.now
        switch request.method {
        case TURNMethod.allocate:
            lock.withLock { expiry = now + .seconds(Int(lifetime)) }
            response.attributes = [
                .xorAddress(
                    TURNAttributeType.xorRelayedAddress, UDPAddress(host: [127, 0, 0, 1], port: 9), transactionID: id),
                .xorMappedAddress(UDPAddress(host: from.addressBytes, port: from.port), transactionID: id),
                .uint32(TURNAttributeType.lifetime, lifetime),
            ]
        case TURNMethod.refresh:
            let asked = request.uint32(TURNAttributeType.lifetime) ?? lifetime
            let expired = lock.withLock { expiry.map { now > $0 } ?? true }
            if expired {
                lock.withLock { late += 1 }
                response.messageClass = .errorResponse
                // ERROR-CODE (RFC 8489 14.8): class 4, number 37, Allocation Mismatch (RFC 8656 18).
                response.attributes = [
                    .init(type: STUNAttributeType.errorCode, value: [0, 0, 4, 37] + Array("Allocation Mismatch".utf8))
                ]
                return response.encoded()
            }
            let granted = asked == 0 ? 0 : lifetime
            lock.withLock {
                if granted == 0 { releases += 1 } else { refreshes += 1 }
                expiry = granted == 0 ? nil : now + .seconds(Int(granted))
            }
            response.attributes = [.uint32(TURNAttributeType.lifetime, granted)]
        case TURNMethod.createPermission, TURNMethod.channelBind: break
        default: return nil
        }
        return response.encoded()
    }
}

@Suite(.serialized)
struct ScriptedTURNRefreshTests {
    /// Policy `all` with the scripted server granting 2 s: while 12 access units go out over the host pair for
    /// about 5 s (past two lifetimes), the client refreshes the allocation every second (half its lifetime), never
    /// late; the server counted exactly the client's Refresh requests, then one release (lifetime 0).
    @Test func allocationOutlivesTwoLifetimes() throws {
        let server = try ScriptedTURNServer(lifetime: 2)
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let (_, sent) = try WHIPRelayTests.clip(frames: 12, in: directory)
        let turn = ICEServer(url: "turn:127.0.0.1:\(server.port)", username: "u", credential: "p")
        let run = try WHIPRelayTests.publish(
            sent, servers: [turn], policy: .all, options: .init(frameInterval: .milliseconds(400)))
        let counts = server.counts
        print(
            "TURN allocation refresh (scripted server, 2 s lifetime, ~5 s stream): client \(run.report.refreshes) "
                + "Refresh requests, server counted \(counts.refreshes), \(counts.late) late")
        #expect(run.report.localType == "host", "\(run.report.pairJSON)")
        #expect(run.report.refreshes >= 3)
        #expect(counts.refreshes == run.report.refreshes)
        #expect(counts.late == 0)
        #expect(counts.releases == 1)
        #expect(run.report.relayLifetimeAfterFinish == 0)
        #expect(run.received.count == sent.count)
    }
}
