import Testing
import WebStreaming

/// The skip rules of a client's queue, with exact counts.
struct ClientQueueTests {
    /// Drains `count` bytes (or all) from the head.
    static func take(_ queue: inout ClientQueue, _ count: Int = .max) -> [UInt8] {
        var taken: [UInt8] = []
        while taken.count < count, !queue.isEmpty {
            let next = queue.nextBytes.prefix(count - taken.count)
            taken += next
            queue.consume(next.count)
        }
        return taken
    }

    @Test func newClientStartsAtAKeyframe() {
        var queue = ClientQueue(maximumBytes: 1000)
        let queued1 = queue.appendAccessUnit([1], isKeyframe: false)
        #expect(!queued1)
        let queued2 = queue.appendAccessUnit([2], isKeyframe: true)
        #expect(queued2)
        let queued3 = queue.appendAccessUnit([3], isKeyframe: false)
        #expect(queued3)
        #expect(Self.take(&queue) == [2, 3])
        #expect(queue.skips == 0 && queue.accessUnitsSkipped == 0 && queue.accessUnitsQueued == 2)
    }

    /// GOP of 4; the client reads nothing for two GOPs, then part of a message.
    @Test func moreThanAGOPBehindSkipsToTheNewestKeyframe() {
        var queue = ClientQueue(maximumBytes: 1 << 20)
        queue.appendControl([0xC0])
        for gop in 0..<2 {
            for index in 0..<4 { queue.appendAccessUnit([UInt8(gop * 4 + index), 0], isKeyframe: index == 0) }
        }
        // Nothing read: keyframe 0 still waits when keyframe 4 arrives, so
        // 0…3 are skipped (once) and 4 is next after the configuration.
        #expect(queue.skips == 1)
        #expect(queue.accessUnitsSkipped == 4)
        #expect(Self.take(&queue) == [0xC0, 4, 0, 5, 0, 6, 0, 7, 0])
        // Head half-written: it is finished even when a skip comes.
        queue.appendAccessUnit([8, 8, 8, 8], isKeyframe: true)
        queue.appendAccessUnit([9], isKeyframe: false)
        #expect(Self.take(&queue, 2) == [8, 8])
        queue.appendAccessUnit([10], isKeyframe: true)  // 8 started: no skip yet
        #expect(queue.skips == 1)
        queue.appendAccessUnit([11], isKeyframe: true)  // 10 waits: skip 9, 10
        #expect(queue.skips == 2)
        #expect(queue.accessUnitsSkipped == 6)
        #expect(Self.take(&queue) == [8, 8, 11])
        #expect(queue.queuedBytes == 0)
    }

    @Test func overflowWaitsForTheNextKeyframe() {
        var queue = ClientQueue(maximumBytes: 10)
        queue.appendAccessUnit([UInt8](repeating: 1, count: 4), isKeyframe: true)
        queue.appendAccessUnit([UInt8](repeating: 2, count: 4), isKeyframe: false)
        queue.appendControl([0xC1])
        queue.appendAccessUnit([UInt8](repeating: 3, count: 4), isKeyframe: false)  // 13 bytes: overflow
        #expect(queue.skips == 1)
        #expect(queue.accessUnitsSkipped == 3)
        #expect(queue.waitingForKeyframe)
        let queued4 = queue.appendAccessUnit([4], isKeyframe: false)
        #expect(!queued4)
        #expect(queue.accessUnitsSkipped == 4)
        let queued5 = queue.appendAccessUnit([5], isKeyframe: true)
        #expect(queued5)
        #expect(Self.take(&queue) == [0xC1, 5])
        #expect(queue.accessUnitsQueued == 1)
    }
}
