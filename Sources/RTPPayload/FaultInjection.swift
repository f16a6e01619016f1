import MediaCore

/// The fault injector's generator: MediaCore's xoshiro256** seeded through
/// splitmix64, so a lossy test or a `--loss PCT --seed N` run is repeatable.
package typealias SeededRandomNumberGenerator = Xoshiro256StarStar

/// Damages a packet stream on purpose, deterministically: drops, duplicates,
/// reorders and truncates packets by probability (from a seeded generator)
/// or at explicit packet indexes, so that tests and `--loss` runs replay the
/// same damage.
///
/// ```swift
/// var receiver = RTPDepacketizer(codec: .h264)
/// var faults = PacketFaultInjector(seed: 7, dropProbability: 0.02)
/// for packet in packets { for damaged in faults.process(packet) { receiver.receive(damaged) } }
/// for late in faults.flush() { receiver.receive(late) }
/// ```
///
/// Packet indexes count the packets given to ``process(_:)`` from 0. A
/// reordered packet is held back and released after `reorderDistance` later
/// packets (or by ``flush()``). Explicit index lists apply in addition to the
/// probabilities; an index in several lists gets each listed fault, drop
/// first (a dropped packet gets no other).
public struct PacketFaultInjector: Sendable {
    /// Chance in [0, 1] that a packet is dropped.
    public var dropProbability: Double
    /// Chance that a packet is sent twice (the copy right after it).
    public var duplicateProbability: Double
    /// Chance that a packet is held back ``reorderDistance`` packets.
    public var reorderProbability: Double
    /// Chance that a packet is cut short (to a random length of at least one
    /// byte, below its own).
    public var truncateProbability: Double
    /// How many later packets overtake a reordered one.
    public var reorderDistance: Int
    /// Packet indexes always dropped.
    public var dropIndexes: Set<Int>
    /// Packet indexes always duplicated.
    public var duplicateIndexes: Set<Int>
    /// Packet indexes always reordered.
    public var reorderIndexes: Set<Int>
    /// Packet indexes always truncated.
    public var truncateIndexes: Set<Int>

    /// What was done so far.
    public private(set) var statistics = Statistics()

    /// Counts of the faults applied.
    public struct Statistics: Sendable, Hashable {
        /// Packets given to ``process(_:)``.
        public var packets = 0
        /// Packets dropped.
        public var dropped = 0
        /// Packets sent twice.
        public var duplicated = 0
        /// Packets held back and released after later ones.
        public var reordered = 0
        /// Packets cut short.
        public var truncated = 0
        /// The indexes of the dropped packets, ascending.
        public var droppedIndexes: [Int] = []
    }

    private var generator: SeededRandomNumberGenerator
    private var held: [(release: Int, packet: [UInt8])] = []

    /// - Parameters:
    ///   - seed: fixes the random choices.
    ///   - dropProbability: the chance in [0, 1] that a packet is dropped.
    ///   - duplicateProbability: the chance that a packet is sent twice.
    ///   - reorderProbability: the chance that a packet is held back.
    ///   - truncateProbability: the chance that a packet is cut short.
    ///   - reorderDistance: how many packets overtake a reordered one (≥ 1).
    ///   - dropIndexes: packet indexes always dropped.
    ///   - duplicateIndexes: packet indexes always duplicated.
    ///   - reorderIndexes: packet indexes always held back.
    ///   - truncateIndexes: packet indexes always cut short.
    public init(
        seed: UInt64, dropProbability: Double = 0, duplicateProbability: Double = 0, reorderProbability: Double = 0,
        truncateProbability: Double = 0, reorderDistance: Int = 3, dropIndexes: Set<Int> = [],
        duplicateIndexes: Set<Int> = [], reorderIndexes: Set<Int> = [], truncateIndexes: Set<Int> = []
    ) {
        precondition(reorderDistance >= 1, "reorderDistance must be at least 1")
        for p in [dropProbability, duplicateProbability, reorderProbability, truncateProbability] {
            precondition((0...1).contains(p), "fault probabilities lie in 0...1")
        }
        self.generator = SeededRandomNumberGenerator(seed: seed)
        self.dropProbability = dropProbability
        self.duplicateProbability = duplicateProbability
        self.reorderProbability = reorderProbability
        self.truncateProbability = truncateProbability
        self.reorderDistance = reorderDistance
        self.dropIndexes = dropIndexes
        self.duplicateIndexes = duplicateIndexes
        self.reorderIndexes = reorderIndexes
        self.truncateIndexes = truncateIndexes
    }

    /// The packets to deliver now in place of `packet`: none (dropped or held
    /// back), it, it twice, a truncated copy, and any held-back packets whose
    /// turn has come, in delivery order. Every die is rolled for every packet,
    /// so the choices for one packet never depend on the outcome for another.
    public mutating func process(_ packet: [UInt8]) -> [[UInt8]] {
        let index = statistics.packets
        statistics.packets += 1
        let rollDrop = generator.nextUnit() < dropProbability
        let rollDuplicate = generator.nextUnit() < duplicateProbability
        let rollReorder = generator.nextUnit() < reorderProbability
        let rollTruncate = generator.nextUnit() < truncateProbability
        let cut = packet.count > 1 ? 1 + Int(generator.next() % UInt64(packet.count - 1)) : 0
        var output: [[UInt8]] = []
        if rollDrop || dropIndexes.contains(index) {
            statistics.dropped += 1
            statistics.droppedIndexes.append(index)
        } else {
            var delivered = packet
            if rollTruncate || truncateIndexes.contains(index) {
                statistics.truncated += 1
                delivered = Array(packet.prefix(cut))
            }
            if rollReorder || reorderIndexes.contains(index) {
                statistics.reordered += 1
                held.append((index + reorderDistance, delivered))
            } else {
                output.append(delivered)
            }
            if rollDuplicate || duplicateIndexes.contains(index) {
                statistics.duplicated += 1
                output.append(delivered)
            }
        }
        while let position = held.firstIndex(where: { $0.release <= index }) {
            output.append(held.remove(at: position).packet)
        }
        return output
    }

    /// Releases every held-back packet, oldest first.
    public mutating func flush() -> [[UInt8]] {
        defer { held.removeAll() }
        return held.map(\.packet)
    }
}
