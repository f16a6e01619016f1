/// Which of a peer's candidates a controlling ICE agent may check, and when
/// (RFC 8445 6.1.4.2 and 14): the candidates of the agent's own address
/// family that are neither unspecified, multicast, broadcast nor reserved,
/// at most ``Limits/maximumCandidates`` of them, checked one at a time every
/// ``Limits/checkInterval`` (Ta) at most, each candidate again no sooner than
/// ``Limits/candidateInterval``, ``Limits/maximumChecks`` checks in all and
/// none at or after the ICE deadline.
///
/// It does no I/O: the agent gives it the candidates an answer names (and
/// the peer-reflexive ones its own checks reveal) and the current time, and
/// sends a check to what ``nextCheck(at:)`` returns. So an answer cannot
/// turn the agent into a reflector toward third parties: with the defaults
/// it sends at most 20 checks a second in all, 5 a second to any one
/// address and 100 in all.
///
/// ```swift
/// var schedule = ICECheckSchedule(localAddress: local, deadline: now + 10)
/// for candidate in answerCandidates { schedule.add(candidate) }
/// if let address = schedule.nextCheck(at: now) { sendCheck(to: address) }
/// ```
public struct ICECheckSchedule: Sendable {
    /// The pacing and the bounds.
    public struct Limits: Sendable, Hashable {
        /// The least time between two checks, whichever candidates (Ta, RFC 8445 14.2).
        public var checkInterval: Double
        /// The least time between two checks of the same candidate.
        public var candidateInterval: Double
        /// The most candidates taken; later ones are refused.
        public var maximumCandidates: Int
        /// The most checks sent in all.
        public var maximumChecks: Int

        /// 50 ms, 200 ms, 8 candidates, 100 checks.
        public init(
            checkInterval: Double = 0.05, candidateInterval: Double = 0.2, maximumCandidates: Int = 8,
            maximumChecks: Int = 100
        ) {
            self.checkInterval = checkInterval
            self.candidateInterval = candidateInterval
            self.maximumCandidates = maximumCandidates
            self.maximumChecks = maximumChecks
        }
    }

    /// Why a candidate is not checked.
    public enum Refusal: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case otherFamily = "an address of another family"
        case unspecified = "an unspecified address"
        case multicast = "a multicast address"
        case broadcast = "a broadcast address"
        case reserved = "a reserved address (240.0.0.0/4)"
        case duplicate = "a candidate already listed"
        case overLimit = "a candidate past the limit"
        /// The reason in words.
        public var description: String { rawValue }
    }

    /// The time comparisons' tolerance, so that a fake clock's exact steps
    /// meet the intervals despite rounding.
    static let epsilon = 1e-9

    /// The number of address bytes of the agent's (first) family (4 or 16).
    public let familyByteCount: Int
    /// The numbers of address bytes of every family the agent has an address of.
    public let familyByteCounts: Set<Int>
    /// No check at or after this time.
    public let deadline: Double
    /// The pacing and the bounds.
    public let limits: Limits
    /// Directed broadcast addresses (of the local interfaces), refused besides 255.255.255.255.
    public let broadcastAddresses: Set<[UInt8]>
    /// The agent's own candidates, each paired with every remote candidate of its family.
    public let localCandidates: [LocalCandidate]
    /// The candidates taken, in the order they came.
    public private(set) var candidates: [UDPAddress] = []
    /// The checklist: every local candidate paired with every remote one of its family, highest pair priority
    /// first (RFC 8445 6.1.2.3), a pair whose local base and remote address an earlier one has pruned (6.1.2.4).
    public private(set) var pairs: [Pair] = []
    /// Pairs pruned as redundant (a server-reflexive local candidate replaced by its base, RFC 8445 6.1.2.4).
    public private(set) var prunedPairs = 0
    /// Candidates refused, per reason.
    public private(set) var refusals: [Refusal: Int] = [:]
    /// Checks handed out so far.
    public private(set) var checksSent = 0
    private var lastCheckOfPair: [Double?] = []
    private var lastCheck: Double?
    private var nextIndex = 0

    /// A schedule for an agent whose own address is `localAddress` (its
    /// family decides which candidates are taken) that gives up at `deadline`.
    public init(
        localAddress: UDPAddress, deadline: Double, limits: Limits = Limits(), broadcastAddresses: Set<[UInt8]> = []
    ) {
        self.init(
            localAddresses: [localAddress], deadline: deadline, limits: limits, broadcastAddresses: broadcastAddresses)
    }

    /// A schedule for an agent with an address of each family in `localAddresses` (at least one; their
    /// families decide which candidates are taken) that gives up at `deadline`.
    public init(
        localAddresses: [UDPAddress], deadline: Double, limits: Limits = Limits(), broadcastAddresses: Set<[UInt8]> = []
    ) {
        self.init(
            localCandidates: localAddresses.enumerated().map { LocalCandidate(base: $1, priority: 0, tag: $0) },
            deadline: deadline, limits: limits, broadcastAddresses: broadcastAddresses)
    }

    /// A schedule for an agent with `localCandidates` (at least one; their families decide which remote candidates
    /// are taken) that gives up at `deadline`: each remote candidate is paired with every local one of its family.
    public init(
        localCandidates: [LocalCandidate], deadline: Double, limits: Limits = Limits(),
        broadcastAddresses: Set<[UInt8]> = []
    ) {
        precondition(!localCandidates.isEmpty, "an agent has at least one address")
        self.localCandidates = localCandidates
        familyByteCount = localCandidates[0].base.host.count
        familyByteCounts = Set(localCandidates.map(\.base.host.count))
        self.deadline = deadline
        self.limits = limits
        self.broadcastAddresses = broadcastAddresses
    }

    /// Why `address` may not be checked by an agent whose addresses have
    /// `familyByteCount` bytes, or nil when it may (IPv4-mapped IPv6
    /// addresses are judged by the IPv4 address they carry).
    public static func refusal(
        of address: UDPAddress, familyByteCount: Int, broadcastAddresses: Set<[UInt8]> = []
    ) -> Refusal? {
        let host = address.host
        guard host.count == familyByteCount else { return .otherFamily }
        if host.count == 16 {
            if host.allSatisfy({ $0 == 0 }) { return .unspecified }
            if host[0] == 0xFF { return .multicast }
            let mapped = host[0..<10].allSatisfy { $0 == 0 } && host[10] == 0xFF && host[11] == 0xFF
            guard mapped else { return nil }
            return ipv4Refusal(Array(host[12...]), broadcastAddresses: broadcastAddresses)
        }
        return ipv4Refusal(host, broadcastAddresses: broadcastAddresses)
    }

    private static func ipv4Refusal(_ host: [UInt8], broadcastAddresses: Set<[UInt8]>) -> Refusal? {
        if host == [255, 255, 255, 255] || broadcastAddresses.contains(host) { return .broadcast }
        if host[0] == 0 { return .unspecified }  // 0.0.0.0/8, "this network" (RFC 1122 3.2.1.3)
        if host[0] & 0xF0 == 0xE0 { return .multicast }  // 224.0.0.0/4
        if host[0] & 0xF0 == 0xF0 { return .reserved }  // 240.0.0.0/4
        return nil
    }

    /// Takes `address` as a candidate unless it is refused; returns the
    /// refusal (also counted in ``refusals``).
    @discardableResult
    public mutating func add(_ address: UDPAddress, priority: UInt32 = 0) -> Refusal? {
        let family = familyByteCounts.contains(address.host.count) ? address.host.count : familyByteCount
        var refusal = Self.refusal(of: address, familyByteCount: family, broadcastAddresses: broadcastAddresses)
        if refusal == nil, candidates.contains(address) { refusal = .duplicate }
        if refusal == nil, candidates.count >= limits.maximumCandidates { refusal = .overLimit }
        if let refusal {
            refusals[refusal, default: 0] += 1
            return refusal
        }
        candidates.append(address)
        for local in localCandidates where local.base.host.count == address.host.count {
            let pair = Pair(local: local, remote: address, remotePriority: priority)
            if let same = pairs.firstIndex(where: { $0.local.base == local.base && $0.remote == address }) {
                prunedPairs += 1
                guard pairs[same].priority < pair.priority else { continue }
                pairs.remove(at: same)
                lastCheckOfPair.remove(at: same)
            }
            // After every pair of at least its priority: equal ones keep the order they came in.
            let index = pairs.firstIndex { $0.priority < pair.priority } ?? pairs.count
            pairs.insert(pair, at: index)
            lastCheckOfPair.insert(nil, at: index)
        }
        return nil
    }

    /// Whether no check will ever be due again: the deadline passed or every check was sent.
    public func isOver(at now: Double) -> Bool { now >= deadline || checksSent >= limits.maximumChecks }

    /// The remote candidate of the pair to check now (``nextPair(at:)``), or nil when none is due.
    public mutating func nextCheck(at now: Double) -> UDPAddress? { nextPair(at: now)?.remote }

    /// The pair to check now, or nil when none is due (counted as sent when returned): one check every
    /// ``Limits/checkInterval`` (Ta); a pair never checked goes first, the highest pair priority first (so a
    /// peer-reflexive one found late is checked at once); then the pairs take turns, each again no sooner than
    /// ``Limits/candidateInterval`` (the checks in flight retransmitted).
    public mutating func nextPair(at now: Double) -> Pair? {
        guard !isOver(at: now), !pairs.isEmpty else { return nil }
        if let lastCheck, now - lastCheck < limits.checkInterval - Self.epsilon { return nil }
        let index: Int
        if let fresh = lastCheckOfPair.firstIndex(where: { $0 == nil }) {
            index = fresh
        } else {
            let order = (0..<pairs.count).map { (nextIndex + $0) % pairs.count }
            guard
                let due = order.first(where: {
                    now - lastCheckOfPair[$0]! >= limits.candidateInterval - Self.epsilon
                })
            else { return nil }
            index = due
            nextIndex = (due + 1) % pairs.count
        }
        lastCheckOfPair[index] = now
        lastCheck = now
        checksSent += 1
        return pairs[index]
    }

    /// The refusals in words, for an error message (empty when none).
    public var refusalSummary: String {
        Refusal.allCases.compactMap { reason in refusals[reason].map { "\(reason) ×\($0)" } }.joined(separator: "; ")
    }
}
