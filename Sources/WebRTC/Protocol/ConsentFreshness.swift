/// Consent freshness on the sending side (RFC 7675): a STUN binding
/// request to the selected pair every ``interval`` (randomized to 0.8–1.2 of
/// it, 5.1), and consent lost when no response came for ``expiry`` (30 s in
/// the RFC); media must stop then.
///
/// It does no I/O: the agent asks ``checkDue(at:)`` when it polls, sends a
/// check when it says so, and calls ``responded(at:)`` for each
/// authenticated response.
public struct ConsentFreshness: Sendable {
    /// The base time between two checks.
    public let interval: Double
    /// How long consent lasts without a response.
    public let expiry: Double
    /// When the last response came (or when consent was first granted).
    public private(set) var lastResponse: Double
    /// When the next check is due.
    public private(set) var nextCheck: Double

    /// Consent granted at `now` (the ICE check that selected the pair).
    ///
    /// - Precondition: `interval` and `expiry` are positive.
    public init(interval: Double = 5, expiry: Double = 30, grantedAt now: Double) {
        precondition(interval > 0 && expiry > 0, "consent interval and expiry must be positive")
        self.interval = interval
        self.expiry = expiry
        lastResponse = now
        nextCheck = now + interval * Double.random(in: 0.8...1.2)
    }

    /// Whether a check is due at `now`; when it is, the next one is
    /// scheduled.
    public mutating func checkDue(at now: Double) -> Bool {
        guard now >= nextCheck, !isExpired(at: now) else { return false }
        nextCheck = now + interval * Double.random(in: 0.8...1.2)
        return true
    }

    /// An authenticated response to one of our checks came at `now`.
    public mutating func responded(at now: Double) { lastResponse = max(lastResponse, now) }

    /// Whether consent is lost at `now`: no response for ``expiry``.
    public func isExpired(at now: Double) -> Bool { now - lastResponse >= expiry }
}
