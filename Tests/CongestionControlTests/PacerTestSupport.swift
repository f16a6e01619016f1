// Helpers for the pacer tests: draining a pacer at the times it asks for.

import CongestionControl

extension Pacer {
    /// Calls `process(at:)` at each `nextSendTime` up to `limit` and returns everything released.
    mutating func drain(until limit: Duration = .seconds(10)) -> [PacedPacket<Packet>] {
        var released: [PacedPacket<Packet>] = []
        var calls = 0
        while let next = nextSendTime, next <= limit, calls < 100_000 {
            released += process(at: next)
            calls += 1
        }
        return released
    }
}

/// Milliseconds as a `Duration` (integers and halves written exactly).
func ms(_ value: Double) -> Duration { .nanoseconds(Int64((value * 1_000_000).rounded())) }
