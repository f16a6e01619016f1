// Refreshing a TURN allocation (RFC 8656): the schedule on a fake clock (the allocation 60 s before its lifetime
// ends, or at half of a short one; channels and permissions 60 s before a permission's 300 s), and the WHIP client
// through coturn keeping permissions and channels 4 s: media still arrives after two lifetimes, and the client's
// rebindings are exactly those coturn logged.
import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import WebRTC

@Suite(.serialized)
struct TURNRefreshTests {
    /// Runs `schedule` on a fake clock from 0 to `end` seconds in 0.1 s steps, each due refresh answered at once
    /// with `granted`; the times of the allocation's and the bindings' refreshes.
    static func simulate(_ schedule: TURNRefreshSchedule, granted: UInt32, until end: Int) -> (
        allocation: [Double], bindings: [Double]
    ) {
        var schedule = schedule
        schedule.allocated(lifetime: granted, at: 0)
        schedule.bound(at: 0)
        var allocation: [Double] = []
        var bindings: [Double] = []
        for tenth in 0...(end * 10) {
            let now = Double(tenth) / 10
            if schedule.isAllocationDue(at: now) {
                allocation.append(now)
                schedule.allocated(lifetime: granted, at: now)
            }
            if schedule.areBindingsDue(at: now) {
                bindings.append(now)
                schedule.bound(at: now)
            }
        }
        return (allocation, bindings)
    }

    /// RFC 8656's defaults over an hour: 600 s granted → a Refresh 60 s before each expiry (every 540 s: 6 in
    /// 3600 s); a permission's 300 s → the channels again every 240 s (15 in 3600 s, the last at 3600 s).
    @Test func defaultScheduleOverAnHour() {
        let (allocation, bindings) = Self.simulate(TURNRefreshSchedule(), granted: 600, until: 3600)
        #expect(allocation == [540, 1080, 1620, 2160, 2700, 3240])
        #expect(bindings == (1...15).map { Double($0 * 240) })
    }

    /// Short lifetimes (coturn's `--max-allocate-lifetime=4`, `--permission-lifetime=4`): each is refreshed at half
    /// its lifetime, every 2 s: 10 of each in 20 s. A server granting less on a Refresh moves the next one sooner;
    /// lifetime 0 (released) ends the refreshes.
    @Test func shortLifetimesAreRefreshedAtHalfTheirLifetime() {
        let schedule = TURNRefreshSchedule(permissionLifetime: 4, channelLifetime: 4)
        let (allocation, bindings) = Self.simulate(schedule, granted: 4, until: 20)
        #expect(allocation == (1...10).map { Double($0 * 2) })
        #expect(bindings == (1...10).map { Double($0 * 2) })
        var shorter = TURNRefreshSchedule()
        shorter.allocated(lifetime: 600, at: 0)
        shorter.allocated(lifetime: 30, at: 100)
        #expect(shorter.allocationDue == 115)
        shorter.allocated(lifetime: 0, at: 120)
        #expect(shorter.allocationDue == nil)
        #expect(!shorter.isAllocationDue(at: 10_000))
    }

    /// A server scripted in memory for `client` on a fake clock: each queued request answered at `now` (Allocate
    /// and Refresh granted `lifetime`, 0 for a release; CreatePermission and ChannelBind taken), counted by method.
    static func serve(_ client: inout TURNClient, lifetime: UInt32, at now: Double, counts: inout [UInt16: Int]) throws
    {
        for bytes in client.takeOutgoing() {
            let request = try STUNMessage.parse(bytes)
            counts[request.method, default: 0] += 1
            let id = request.transactionID
            var response = STUNMessage(method: request.method, messageClass: .successResponse, transactionID: id)
            if request.method == TURNMethod.allocate {
                response.attributes = [
                    .xorAddress(
                        TURNAttributeType.xorRelayedAddress, UDPAddress(host: [192, 0, 2, 1], port: 50000),
                        transactionID: id),
                    .uint32(TURNAttributeType.lifetime, lifetime),
                ]
            } else if request.method == TURNMethod.refresh {
                let asked = request.uint32(TURNAttributeType.lifetime) ?? lifetime
                response.attributes = [.uint32(TURNAttributeType.lifetime, asked == 0 ? 0 : lifetime)]
            }
            client.receive(response.encoded(), at: now)
        }
    }

    /// A TURN client driven by the schedule on a fake clock for an hour against the scripted server granting 600 s:
    /// the server gets exactly 1 Allocate, 6 Refresh requests (every 540 s), 1 + 15 ChannelBinds (every 240 s),
    /// then the release; each Refresh's granted lifetime sets the next one.
    @Test func clientOnAFakeClockAgainstAScriptedServer() throws {
        var client = TURNClient(transport: .udp, credentials: .init(username: "u", password: "p"))
        var schedule = TURNRefreshSchedule()
        var counts: [UInt16: Int] = [:]
        let peer = UDPAddress(host: [192, 0, 2, 2], port: 5000)
        client.allocate(at: 0)
        try Self.serve(&client, lifetime: 600, at: 0, counts: &counts)
        try client.bindChannel(to: peer, at: 0)
        try Self.serve(&client, lifetime: 600, at: 0, counts: &counts)
        for event in client.takeEvents() {
            if case .allocated(_, _, let lifetime) = event { schedule.allocated(lifetime: lifetime, at: 0) }
            if case .channelBound = event { schedule.bound(at: 0) }
        }
        for tenth in 1...36000 {
            let now = Double(tenth) / 10
            if schedule.isAllocationDue(at: now) { client.refresh(lifetime: 600, at: now) }
            if schedule.areBindingsDue(at: now) { try client.bindChannel(to: peer, at: now) }
            try Self.serve(&client, lifetime: 600, at: now, counts: &counts)
            for event in client.takeEvents() {
                if case .refreshed(let lifetime) = event { schedule.allocated(lifetime: lifetime, at: now) }
                if case .channelBound = event { schedule.bound(at: now) }
            }
        }
        #expect(counts[TURNMethod.allocate] == 1)
        #expect(counts[TURNMethod.refresh] == 6)
        #expect(counts[TURNMethod.channelBind] == 16)
        client.refresh(lifetime: 0, at: 3600)
        try Self.serve(&client, lifetime: 600, at: 3600, counts: &counts)
        #expect(client.takeEvents() == [.refreshed(lifetime: 0)])
        schedule.allocated(lifetime: 0, at: 3600)
        #expect(!schedule.isAllocationDue(at: 7200))
        #expect(!client.hasOutstandingRequests)
    }

    /// coturn's log lines (`--verbose`) for a permission installed or refreshed (CreatePermission and ChannelBind
    /// each log one).
    static func loggedPermissionUpdates(_ log: String) -> Int {
        log.split(separator: "\n").filter { $0.contains(": peer 127.0.0.1 lifetime updated: ") }.count
    }

    /// coturn keeps permissions and channels 4 s (`--permission-lifetime`, `--channel-lifetime`); the client, told
    /// so, binds its one channel again every 2 s: every access unit of a 10 s stream (past two lifetimes) arrives
    /// bit-exact through the relay, and coturn logged exactly the client's permission updates (its CreatePermission
    /// and first ChannelBind, then one per rebinding). coturn grants an allocation 600 s whatever is asked, so the
    /// allocation's own Refresh is not due here (ScriptedTURNRefreshTests covers it).
    @Test func channelsOutliveTwoLifetimes() throws {
        let server = try CoturnServer(extraArguments: ["--permission-lifetime=4", "--channel-lifetime=4", "--verbose"])
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let (path, sent) = try WHIPRelayTests.clip(frames: 25, in: directory)
        let run = try WHIPRelayTests.publish(
            sent, servers: [WHIPRelayTests.turn(server)], policy: .relay,
            options: .init(
                configure: { $0.relayRefresh = TURNRefreshSchedule(permissionLifetime: 4, channelLifetime: 4) },
                frameInterval: .milliseconds(400)))
        let logged = Self.loggedPermissionUpdates(server.stop())
        print(
            "TURN channels through coturn (4 s lifetimes, 10 s stream): \(run.report.bindingRefreshes) rebindings, "
                + "\(run.report.refreshes) allocation Refreshes; coturn logged \(logged) permission updates")
        #expect(run.report.localType == "relay", "\(run.report.pairJSON)")
        #expect(run.report.bindingRefreshes >= 3)
        #expect(logged == 2 + run.report.bindingRefreshes)
        #expect(run.report.refreshes == 0)
        try WHIPRelayTests.expectBitExact(run, clip: path, frames: 25, in: directory)
    }
}
