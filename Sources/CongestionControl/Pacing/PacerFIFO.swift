// A first-in first-out queue with O(1) push and pop, one per priority class of the pacer.

/// An array with a moving head: `pop` is O(1) amortised and the storage is
/// compacted once more than half of it has been consumed.
struct PacerFIFO<Element> {
    private var storage: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }
    var first: Element? { isEmpty ? nil : storage[head] }

    mutating func push(_ element: Element) {
        storage.append(element)
    }

    mutating func pop() -> Element? {
        guard !isEmpty else { return nil }
        let element = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }
}
extension PacerFIFO: Sendable where Element: Sendable {}
