// Host candidates: an address and port with its RFC 8445 priority, as an
// `a=candidate` line, and the priorities of several addresses of one agent.

/// One UDP host candidate (RFC 8445 5.1.1.1) for component 1 (RTP and RTCP
/// are multiplexed): a numeric IPv4 or IPv6 address, its port, its
/// foundation and priority.
public struct HostCandidate: Sendable, Hashable, CustomStringConvertible {
    /// A numeric IPv4 or IPv6 address (no brackets, no zone).
    public var host: String
    /// The UDP port.
    public var port: Int
    /// The foundation: distinct for each base address (RFC 8445 5.1.1.3).
    public var foundation: String
    /// The priority (RFC 8445 5.1.2.1).
    public var priority: UInt32

    /// Creates a candidate.
    public init(host: String, port: Int, foundation: String = "1", priority: UInt32 = HostCandidate.priority()) {
        self.host = host
        self.port = port
        self.foundation = foundation
        self.priority = priority
    }

    /// The RFC 8445 5.1.2.1 priority of a host candidate (type preference
    /// 126) with `localPreference` (0–65535) for `component` (1–256):
    /// 2^24 × 126 + 2^8 × localPreference + (256 − component).
    public static func priority(localPreference: Int = 65535, component: Int = 1) -> UInt32 {
        precondition((0...65535).contains(localPreference) && (1...256).contains(component))
        return UInt32(126) << 24 + UInt32(localPreference) << 8 + UInt32(256 - component)
    }

    /// Whether ``host`` is an IPv6 address.
    public var isIPv6: Bool { host.contains(":") }

    /// The attribute's value: `candidate:FOUNDATION 1 udp PRIORITY HOST PORT typ host`.
    public var description: String { "candidate:\(foundation) 1 udp \(priority) \(host) \(port) typ host" }

    /// A candidate for each of `addresses` (numeric hosts, each with its
    /// port), in that order: foundations 1, 2, … and local preferences
    /// 65535, 65534, … so that every priority differs and the first address is
    /// preferred.
    public static func ranked(_ addresses: [(host: String, port: Int)]) -> [HostCandidate] {
        addresses.prefix(65535).enumerated().map { index, address in
            HostCandidate(
                host: address.host, port: address.port, foundation: String(index + 1),
                priority: priority(localPreference: 65535 - index))
        }
    }
}
