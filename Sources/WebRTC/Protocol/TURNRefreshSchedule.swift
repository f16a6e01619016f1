// When a TURN client refreshes its allocation, permissions and channel bindings (RFC 8656 8, 9, 12), without
// I/O or a clock of its own.

/// When a TURN client refreshes what the server keeps for it (RFC 8656): the allocation (a Refresh request) before
/// the lifetime the server granted runs out, and the permissions (300 s) and channel bindings (600 s) before theirs
/// (a ChannelBind again, which refreshes the channel and its peer's permission, RFC 8656 12). The caller gives the
/// times (seconds on any clock, a fake one in tests) and sends the requests.
///
/// Each is due ``lead(lifetime:)`` before it expires: ``margin`` (60 s) before, or at half of a lifetime of
/// 2 × ``margin`` or less. With the defaults, an allocation granted 600 s is refreshed every 540 s and the channel
/// bindings every 240 s (300 s of a permission less 60 s); one granted 4 s every 2 s.
///
/// ```swift
/// var schedule = TURNRefreshSchedule()
/// schedule.allocated(lifetime: 600, at: 0)  // the Allocate's (or a Refresh's) LIFETIME, granted at 0 s
/// schedule.bound(at: 0)  // the channels bound at 0 s
/// if schedule.isAllocationDue(at: 540) { print("Refresh: 60 s before the 600 s end") }
/// if schedule.areBindingsDue(at: 240) { print("ChannelBind again: 60 s before a permission's 300 s") }
/// ```
///
/// Permissions and channels have no LIFETIME attribute: a server that keeps them shorter (coturn's
/// `--permission-lifetime`, `--channel-lifetime`) needs ``permissionLifetime`` and ``channelLifetime`` set to match.
public struct TURNRefreshSchedule: Sendable, Hashable {
    /// How long the server keeps a permission, in seconds (RFC 8656 9: 300).
    public var permissionLifetime: Double
    /// How long the server keeps a channel binding, in seconds (RFC 8656 12: 600).
    public var channelLifetime: Double
    /// How long before an expiry a refresh is due, in seconds (for lifetimes over twice as long).
    public var margin: Double
    /// When the allocation's refresh is due (nil before ``allocated(lifetime:at:)``, or once released).
    public private(set) var allocationDue: Double?
    /// When the channel bindings' refresh is due (nil before ``bound(at:)``).
    public private(set) var bindingsDue: Double?

    /// A schedule with RFC 8656's lifetimes (300 s, 600 s) and a margin of 60 s.
    public init(permissionLifetime: Double = 300, channelLifetime: Double = 600, margin: Double = 60) {
        self.permissionLifetime = permissionLifetime
        self.channelLifetime = channelLifetime
        self.margin = margin
    }

    /// How long before the end of `lifetime` seconds a refresh is due: ``margin``, or half of `lifetime` when that
    /// is shorter.
    public func lead(lifetime: Double) -> Double { min(margin, lifetime / 2) }

    /// The server granted the allocation `lifetime` seconds at `now` (an Allocate or Refresh response); 0 (released)
    /// ends its refreshes.
    public mutating func allocated(lifetime: UInt32, at now: Double) {
        let seconds = Double(lifetime)
        allocationDue = lifetime == 0 ? nil : now + seconds - lead(lifetime: seconds)
    }

    /// The channels (and with them their permissions) were bound or bound again at `now`.
    public mutating func bound(at now: Double) {
        let shortest = min(permissionLifetime, channelLifetime)
        bindingsDue = now + shortest - lead(lifetime: shortest)
    }

    /// Whether the allocation's Refresh is due at `now`.
    public func isAllocationDue(at now: Double) -> Bool { allocationDue.map { now >= $0 } ?? false }

    /// Whether the channel bindings' refresh is due at `now`.
    public func areBindingsDue(at now: Double) -> Bool { bindingsDue.map { now >= $0 } ?? false }
}
