import Dispatch
import MediaCore
import Testing

@Suite struct LiveObjectsTests {
    @Test func countsPerKindAcrossThreads() {
        let kind = LiveObjects.Kind(rawValue: "LiveObjectsTests.counter")
        #expect(LiveObjects.count(kind) == 0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<1000 { LiveObjects.increment(kind) }
        }
        #expect(LiveObjects.count(kind) == 8000)
        #expect(LiveObjects.snapshot()[kind] == 8000)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<1000 { LiveObjects.decrement(kind) }
        }
        #expect(LiveObjects.count(kind) == 0)
        #expect(LiveObjects.snapshot()[kind] == nil, "kinds back at zero leave the snapshot")
    }

    @Test func kindsAreIndependent() {
        let a = LiveObjects.Kind(rawValue: "LiveObjectsTests.a")
        let b = LiveObjects.Kind(rawValue: "LiveObjectsTests.b")
        LiveObjects.increment(a)
        #expect(LiveObjects.count(a) == 1 && LiveObjects.count(b) == 0)
        LiveObjects.decrement(a)
        #expect(LiveObjects.count(a) == 0)
        #expect(LiveObjects.Kind.x264Encoder != LiveObjects.Kind.x265Encoder)
    }
}
