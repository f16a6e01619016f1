import Testing
import WebStreaming

/// The bound on a client's control messages, and what a leaving client keeps.
struct ClientQueueControlTests {
    /// Control bytes waiting are counted as they are written; one more than
    /// the bound is reported (and still queued, whole).
    @Test func controlBytesAreBounded() {
        var queue = ClientQueue(maximumBytes: 1 << 20, maximumControlBytes: 10)
        let fits = [queue.appendControl([1, 2, 3, 4, 5, 6]), queue.appendAccessUnit([9, 9, 9], isKeyframe: true)]
        let fitsAtTheBound = queue.appendControl([7, 8, 9, 10])
        #expect(fits == [true, true] && fitsAtTheBound)
        #expect(queue.controlBytes == 10)
        let fitsPastTheBound = queue.appendControl([11])
        #expect(!fitsPastTheBound)
        #expect(queue.controlBytes == 11)
        let head = ClientQueueTests.take(&queue, 4)
        #expect(head == [1, 2, 3, 4])
        #expect(queue.controlBytes == 7)
        let fitsAgain = queue.appendControl([12])
        #expect(fitsAgain)
        let rest = ClientQueueTests.take(&queue)
        #expect(rest == [5, 6, 9, 9, 9, 7, 8, 9, 10, 11, 12])
        #expect(queue.controlBytes == 0 && queue.queuedBytes == 0)
    }

    /// A leaving client finishes the message it started and gets the control
    /// messages, not the access units after it; that is not a skip.
    @Test func endAccessUnitsKeepsTheStartedMessageAndControl() {
        var queue = ClientQueue(maximumBytes: 1 << 20)
        queue.appendAccessUnit([1, 1], isKeyframe: true)
        queue.appendAccessUnit([2, 2], isKeyframe: false)
        queue.appendControl([0xC0])
        queue.appendAccessUnit([3, 3], isKeyframe: false)
        let first = ClientQueueTests.take(&queue, 1)
        #expect(first == [1])
        queue.endAccessUnits()
        queue.appendControl([0x88])
        let rest = ClientQueueTests.take(&queue)
        #expect(rest == [1, 0xC0, 0x88])
        #expect(queue.skips == 0 && queue.accessUnitsSkipped == 0)
        #expect(queue.accessUnitsQueued == 1)
        #expect(queue.queuedBytes == 0)
    }
}
