// ICECheckSchedule's candidate pairs: the agent's local candidates, a pair of a local and a remote candidate and
// its priority (RFC 8445 6.1.2.3) with the agent controlling.

extension ICECheckSchedule {
    /// One of the agent's own candidates: the address its checks leave from (its base: the socket's address for a
    /// host or server-reflexive candidate, the relayed address for a relayed one), its priority as offered, and
    /// a tag the owner chooses to know which of its candidates it is.
    public struct LocalCandidate: Sendable, Hashable {
        /// The candidate's base.
        public var base: UDPAddress
        /// The candidate's priority (RFC 8445 5.1.2.1), as in its `a=candidate` line.
        public var priority: UInt32
        /// The owner's tag for the candidate (which socket, or the relay).
        public var tag: Int

        /// A local candidate.
        public init(base: UDPAddress, priority: UInt32, tag: Int) {
            self.base = base
            self.priority = priority
            self.tag = tag
        }
    }

    /// A candidate pair: one of ours and one of the remote agent's of the same family.
    public struct Pair: Sendable, Hashable {
        /// Our candidate.
        public var local: LocalCandidate
        /// The remote candidate.
        public var remote: UDPAddress
        /// The remote candidate's priority (its `a=candidate` line's; a peer-reflexive one's PRIORITY attribute).
        public var remotePriority: UInt32

        /// A pair.
        public init(local: LocalCandidate, remote: UDPAddress, remotePriority: UInt32) {
            self.local = local
            self.remote = remote
            self.remotePriority = remotePriority
        }

        /// The pair's priority with us controlling (``ICECheckSchedule/pairPriority(controlling:controlled:)``).
        public var priority: UInt64 {
            ICECheckSchedule.pairPriority(controlling: local.priority, controlled: remotePriority)
        }
    }

    /// RFC 8445 6.1.2.3: 2^32 × MIN(G, D) + 2 × MAX(G, D) + (G > D ? 1 : 0), with G the controlling agent's
    /// candidate priority and D the controlled agent's (wrapping past 2^64, which only priorities above RFC 8445's
    /// 2^31 − 1 reach).
    public static func pairPriority(controlling g: UInt32, controlled d: UInt32) -> UInt64 {
        let (g, d) = (UInt64(g), UInt64(d))
        return (1 << 32) &* min(g, d) &+ 2 &* max(g, d) &+ (g > d ? 1 : 0)
    }
}
