/// Repeated messages coalesced: each distinct reason once, in the order it
/// first came, with how many times it came. Reports use it so that a problem
/// repeated on every access unit reads as one line with a count.
public struct ReasonTally: Sendable, Hashable, CustomStringConvertible {
    /// One distinct reason and how many times it came.
    public struct Entry: Sendable, Hashable {
        /// The message, exactly as added.
        public var reason: String
        /// How many times the message was added (1 or more).
        public var count: Int
    }

    /// The distinct reasons in the order each first came.
    public private(set) var entries: [Entry] = []
    private var index: [String: Int] = [:]

    /// Creates an empty tally.
    public init() {}

    /// Creates a tally that has counted each of `reasons` once, in order.
    public init(_ reasons: some Sequence<String>) {
        for reason in reasons { add(reason) }
    }

    /// Counts `reason` `count` more times.
    public mutating func add(_ reason: String, count: Int = 1) {
        if let position = index[reason] {
            entries[position].count += count
        } else {
            index[reason] = entries.count
            entries.append(Entry(reason: reason, count: count))
        }
    }

    /// The total of all counts.
    public var total: Int { entries.reduce(0) { $0 + $1.count } }

    /// Whether no reason has been added.
    public var isEmpty: Bool { entries.isEmpty }

    /// One line per reason: `reason` or `reason (×N)`.
    public var lines: [String] { entries.map { $0.count == 1 ? $0.reason : "\($0.reason) (×\($0.count))" } }

    /// The ``lines`` joined by newlines; empty when nothing was added.
    public var description: String { lines.joined(separator: "\n") }
}
