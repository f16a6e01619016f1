import Testing
import WebRTC

/// The WHIP client's choice and pacing of ICE checks (``ICECheckSchedule``)
/// and its consent freshness (``ConsentFreshness``), driven by a fake clock.
struct ICECheckScheduleTests {
    static let local = UDPAddress(host: [127, 0, 0, 1], port: 40000)

    static func v4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, port: UInt16 = 5000) -> UDPAddress {
        UDPAddress(host: [a, b, c, d], port: port)
    }

    static func v6(_ groups: [UInt16], port: UInt16 = 5000) -> UDPAddress {
        UDPAddress(host: groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }, port: port)
    }

    struct Case: Sendable, CustomStringConvertible {
        var address: UDPAddress
        var refusal: ICECheckSchedule.Refusal?
        var description: String { "\(address) → \(refusal.map { "\($0)" } ?? "taken")" }
    }

    /// Every unspecified, multicast, broadcast, reserved and other-family
    /// form (IPv4 and IPv6, IPv4-mapped included) is refused; unicast of
    /// the agent's family is taken.
    @Test(arguments: [
        Case(address: v4(127, 0, 0, 1), refusal: nil),
        Case(address: v4(127, 0, 0, 9), refusal: nil),
        Case(address: v4(192, 0, 2, 7), refusal: nil),
        Case(address: v4(0, 0, 0, 0), refusal: .unspecified),
        Case(address: v4(0, 1, 2, 3), refusal: .unspecified),
        Case(address: v4(224, 0, 0, 1), refusal: .multicast),
        Case(address: v4(224, 0, 0, 251), refusal: .multicast),
        Case(address: v4(239, 255, 255, 250), refusal: .multicast),
        Case(address: v4(255, 255, 255, 255), refusal: .broadcast),
        Case(address: v4(192, 0, 2, 255), refusal: .broadcast),  // an interface's directed broadcast, given
        Case(address: v4(240, 0, 0, 1), refusal: .reserved),
        Case(address: v6([0, 0, 0, 0, 0, 0, 0, 1]), refusal: .otherFamily),
        Case(address: v6([0, 0, 0, 0, 0, 0, 0, 0]), refusal: .otherFamily),
        Case(address: v6([0xFF02, 0, 0, 0, 0, 0, 0, 1]), refusal: .otherFamily),
    ])
    func ipv4AgentTakesOnlyUnicastIPv4(_ test: Case) {
        var schedule = ICECheckSchedule(
            localAddress: Self.local, deadline: 10, broadcastAddresses: [[192, 0, 2, 255]])
        #expect(schedule.add(test.address) == test.refusal)
        #expect(schedule.candidates == (test.refusal == nil ? [test.address] : []))
        #expect(schedule.refusals == (test.refusal.map { [$0: 1] } ?? [:]))
    }

    @Test(arguments: [
        Case(address: v6([0, 0, 0, 0, 0, 0, 0, 1]), refusal: nil),
        Case(address: v6([0x2001, 0xDB8, 0, 0, 0, 0, 0, 5]), refusal: nil),
        Case(address: v6([0, 0, 0, 0, 0, 0, 0, 0]), refusal: .unspecified),
        Case(address: v6([0xFF02, 0, 0, 0, 0, 0, 0, 1]), refusal: .multicast),
        Case(address: v6([0xFF0E, 0, 0, 0, 0, 0, 0, 0x101]), refusal: .multicast),
        Case(address: v6([0, 0, 0, 0, 0, 0xFFFF, 0xE000, 0x0001]), refusal: .multicast),  // ::ffff:224.0.0.1
        Case(address: v6([0, 0, 0, 0, 0, 0xFFFF, 0, 0]), refusal: .unspecified),  // ::ffff:0.0.0.0
        Case(address: v6([0, 0, 0, 0, 0, 0xFFFF, 0xFFFF, 0xFFFF]), refusal: .broadcast),  // ::ffff:255.255.255.255
        Case(address: v4(127, 0, 0, 1), refusal: .otherFamily),
    ])
    func ipv6AgentTakesOnlyUnicastIPv6(_ test: Case) {
        var schedule = ICECheckSchedule(localAddress: Self.v6([0, 0, 0, 0, 0, 0, 0, 1], port: 1), deadline: 10)
        #expect(schedule.add(test.address) == test.refusal)
    }

    @Test func duplicatesAndCandidatesPastTheLimitAreRefused() {
        var schedule = ICECheckSchedule(localAddress: Self.local, deadline: 10)
        for last in 1...12 { schedule.add(Self.v4(127, 0, 0, UInt8(last))) }
        schedule.add(Self.v4(127, 0, 0, 1))
        #expect(schedule.candidates == (1...8).map { Self.v4(127, 0, 0, UInt8($0)) })
        #expect(schedule.refusals == [.overLimit: 4, .duplicate: 1])
        #expect(schedule.refusalSummary == "a candidate already listed ×1; a candidate past the limit ×4")
    }

    /// Runs `schedule` on a fake clock from 0 to `end` seconds in 1 ms
    /// steps; every check handed out, with its time.
    static func run(_ schedule: inout ICECheckSchedule, until end: Int) -> [(time: Double, address: UDPAddress)] {
        var sent: [(Double, UDPAddress)] = []
        for millisecond in 0..<end {
            let now = Double(millisecond) / 1000
            if let address = schedule.nextCheck(at: now) { sent.append((now, address)) }
        }
        return sent
    }

    /// Eight silent candidates, a 3 s deadline: one check per 50 ms in all,
    /// at least 200 ms between two checks of one candidate, each checked
    /// in turn, and nothing at or after the deadline.
    @Test func checksArePacedAndStopAtTheDeadline() {
        var schedule = ICECheckSchedule(localAddress: Self.local, deadline: 3)
        for last in 1...8 { schedule.add(Self.v4(127, 0, 0, UInt8(last))) }
        let sent = Self.run(&schedule, until: 10_000)
        #expect(sent.count == 60)
        #expect(sent.last!.time < 3)
        #expect(zip(sent, sent.dropFirst()).allSatisfy { $1.time - $0.time >= 0.05 - 1e-9 })
        for candidate in schedule.candidates {
            let times = sent.filter { $0.address == candidate }.map(\.time)
            #expect(times.count == 7 || times.count == 8, "\(candidate): \(times.count)")
            #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= 0.2 - 1e-9 })
        }
        #expect(schedule.nextCheck(at: 3) == nil)
    }

    /// One silent candidate: one check per 200 ms until the total is spent.
    @Test func theTotalIsBounded() {
        var schedule = ICECheckSchedule(
            localAddress: Self.local, deadline: 1000, limits: .init(maximumChecks: 30))
        schedule.add(Self.v4(127, 0, 0, 1))
        let sent = Self.run(&schedule, until: 60_000)
        #expect(sent.count == 30)
        #expect(sent.map(\.time) == (0..<30).map { Double($0) / 5 })
        #expect(schedule.isOver(at: 6))
    }

    /// A peer-reflexive candidate that turns up late is checked at the next
    /// turn, still within the pacing.
    @Test func aLateCandidateGoesFirst() {
        var schedule = ICECheckSchedule(localAddress: Self.local, deadline: 10)
        schedule.add(Self.v4(127, 0, 0, 1))
        #expect(schedule.nextCheck(at: 0) == Self.v4(127, 0, 0, 1))
        schedule.add(Self.v4(127, 0, 0, 2))
        #expect(schedule.nextCheck(at: 0.01) == nil)
        #expect(schedule.nextCheck(at: 0.05) == Self.v4(127, 0, 0, 2))
        #expect(schedule.nextCheck(at: 0.1) == nil)
        #expect(schedule.nextCheck(at: 0.2) == Self.v4(127, 0, 0, 1))
    }

    /// Consent (RFC 7675): checks every 0.8–1.2 × the interval while
    /// responses come; lost `expiry` after the last response, and no check
    /// is due after that.
    @Test func consentExpiresWithoutResponses() {
        var consent = ConsentFreshness(interval: 1, expiry: 5, grantedAt: 0)
        var checks: [Double] = []
        for millisecond in 0..<20_000 {
            let now = Double(millisecond) / 1000
            if consent.checkDue(at: now) {
                checks.append(now)
                if now < 3 { consent.responded(at: now + 0.01) }
            }
        }
        let respondedLast = checks.last { $0 < 3 }! + 0.01
        #expect(consent.lastResponse == respondedLast)
        #expect(consent.isExpired(at: respondedLast + 5))
        #expect(!consent.isExpired(at: respondedLast + 4.999))
        #expect(checks.allSatisfy { $0 < respondedLast + 5 })
        #expect(zip([0] + checks, checks).allSatisfy { $1 - $0 >= 0.8 - 1e-9 && $1 - $0 <= 1.2 + 0.001 })
    }
}
