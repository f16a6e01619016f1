import MediaCore
import Synchronization
import Testing

/// The queue behind both asynchronous sessions.
@Suite struct BoundedChannelTests {
    @Test func deliversInOrderAndEndsAfterFinish() async {
        let channel = BoundedChannel<Int>(capacity: 3)
        let consumer = Task {
            var seen: [Int] = []
            while let value = await channel.receive() { seen.append(value) }
            return seen
        }
        for value in 0..<100 { #expect(await channel.send(value)) }
        channel.finish()
        #expect(await consumer.value == Array(0..<100))
        #expect(await channel.send(100) == false)
    }

    @Test func aFullChannelSuspendsTheSender() async throws {
        let channel = BoundedChannel<Int>(capacity: 2)
        let sent = Atomic<Int>(0)
        let sender = Task {
            for value in 0..<5 {
                _ = await channel.send(value)
                sent.add(1, ordering: .sequentiallyConsistent)
            }
        }
        for _ in 0..<200 where sent.load(ordering: .sequentiallyConsistent) < 2 {
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(sent.load(ordering: .sequentiallyConsistent) == 2)
        #expect(await channel.receive() == 0)
        for _ in 0..<200 where sent.load(ordering: .sequentiallyConsistent) < 3 {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(sent.load(ordering: .sequentiallyConsistent) == 3)
        channel.finish()
        await sender.value
    }

    @Test func purgeRefusesSendsTaggedWithTheOldGeneration() async {
        let channel = BoundedChannel<Int>(capacity: 4)
        let old = channel.generation
        _ = await channel.send(1, generation: old)
        _ = await channel.send(2, generation: old)
        #expect(channel.purge() == [1, 2])
        #expect(await channel.send(3, generation: old) == false)
        #expect(await channel.send(4, generation: channel.generation))
        channel.finish()
        #expect(await channel.receive() == 4)
        #expect(await channel.receive() == nil)
    }

    @Test func sessionOutputThrowsTheFailureThatEndedIt() async throws {
        let channel = BoundedChannel<SessionEvent<Int>>(capacity: 4)
        _ = await channel.send(.element(7))
        _ = await channel.send(.failure(MediaError(.backendFailure, "broken")))
        channel.finish()
        var iterator = SessionOutput(channel: channel).makeAsyncIterator()
        #expect(try await iterator.next() == 7)
        await #expect(throws: MediaError(.backendFailure, "broken")) { try await iterator.next() }
    }

    @Test func queueDepthIsCheckedTheSameWayForBothSessions() {
        #expect(throws: MediaError.invalidArgument("queueDepth 0: must be from 1 to 1024")) {
            try checkQueueDepth(0)
        }
        #expect(throws: MediaError.invalidArgument("queueDepth 1025: must be from 1 to 1024")) {
            try checkQueueDepth(1025)
        }
        #expect(throws: Never.self) { try checkQueueDepth(1024) }
    }
}
