/// Repeated messages coalesced: each distinct reason once, in the order it
/// first came, with how many times it came. Reports use it so that a problem
/// repeated on every access unit reads as one line with a count.
public struct ReasonTally: Sendable, Hashable, CustomStringConvertible {
    public struct Entry: Sendable, Hashable {
        public var reason: String
        public var count: Int
    }

    public private(set) var entries: [Entry] = []
    private var index: [String: Int] = [:]

    public init() {}

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

    public var isEmpty: Bool { entries.isEmpty }

    /// One line per reason: `reason` or `reason (×N)`.
    public var lines: [String] { entries.map { $0.count == 1 ? $0.reason : "\($0.reason) (×\($0.count))" } }

    public var description: String { lines.joined(separator: "\n") }
}
