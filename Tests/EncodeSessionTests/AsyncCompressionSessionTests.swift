import Dispatch
import FormatConv
import MediaCore
import MediaIO
import Synchronization
import Testing

@testable import EncodeSession
@testable import NativeCodecs

@Suite struct AsyncCompressionSessionTests {
    @Test(arguments: [CodecType.h264, .hevc])
    func samplesArriveThroughTheSequence(codec: CodecType) async throws {
        let clip = SyntheticClip(width: 160, height: 120, frameCount: 30)
        var properties = CompressionProperties()
        properties.preset = "veryfast"
        properties.maxBFrames = 2
        let session = try AsyncCompressionSession(
            width: 160, height: 120, codec: codec, encoder: .software, properties: properties, queueDepth: 2)
        #expect(session.backend == (codec == .h264 ? "x264" : "x265"))
        let consumer = Task {
            var samples: [CompressedSample] = []
            for try await sample in session.samples { samples.append(sample) }
            return samples
        }
        for index in 0..<clip.frameCount {
            try await session.encode(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
        }
        let dropped = try await session.finish()
        #expect(dropped.isEmpty)
        let samples = try await consumer.value
        #expect(samples.count == 30)
        #expect(Set(samples.map(\.pts)) == Set((0..<30).map { clip.presentationTime(ofFrame: $0) }))
        for (previous, next) in zip(samples, samples.dropFirst()) { #expect(previous.dts < next.dts) }
        #expect(samples.first?.isKeyframe == true)
        #expect(samples.allSatisfy { $0.formatDescription == session.formatDescription })
    }

    @Test func badFramesAreRefusedAtTheCall() async throws {
        let session = try AsyncCompressionSession(width: 160, height: 120, codec: .h264, encoder: .software)
        let frame = try PixelBuffer(width: 160, height: 120, format: .i420)
        try await session.encode(frame, pts: MediaTime(value: 5, timescale: 30))
        await #expect {
            try await session.encode(frame, pts: MediaTime(value: 4, timescale: 30))
        } throws: { ($0 as? MediaError)?.code == .invalidTimestamp }
        let small = try PixelBuffer(width: 80, height: 60, format: .i420)
        await #expect {
            try await session.encode(small, pts: MediaTime(value: 6, timescale: 30))
        } throws: { ($0 as? MediaError)?.code == .invalidArgument }
        let consumer = Task {
            var count = 0
            for try await _ in session.samples { count += 1 }
            return count
        }
        try await session.finish()
        await #expect {
            try await session.encode(frame, pts: MediaTime(value: 7, timescale: 30))
        } throws: { ($0 as? MediaError)?.code == .invalidated }
        #expect(try await consumer.value == 1)
    }

    @Test func invalidateEndsTheSequence() async throws {
        let session = try AsyncCompressionSession(width: 160, height: 120, codec: .hevc, encoder: .software)
        let frame = try PixelBuffer(width: 160, height: 120, format: .i420)
        try await session.encode(frame, pts: .zero)
        await session.invalidate()
        for try await _ in session.samples {}
        await #expect {
            try await session.encode(frame, pts: MediaTime(value: 1, timescale: 30))
        } throws: { ($0 as? MediaError)?.code == .invalidated }
    }

    @Test func queueDepthIsChecked() {
        #expect(throws: MediaError.invalidArgument("queueDepth 0: must be from 1 to 1024")) {
            try AsyncCompressionSession(width: 160, height: 120, codec: .h264, encoder: .software, queueDepth: 0)
        }
    }

    @Test func aFullQueueSuspendsTheProducer() async throws {
        let gate = Gate()
        let factory = EncoderFactory(hardware: { configuration, _ throws(MediaError) in
            try GatedBackend(wrapping: X264Encoder(configuration), gate: gate)
        })
        var properties = CompressionProperties()
        properties.allowFrameReordering = false
        let depth = 2
        let session = try AsyncCompressionSession(
            width: 160, height: 120, codec: .h264, encoder: .hardware, properties: properties, queueDepth: depth,
            factory: factory)
        let clip = SyntheticClip(width: 160, height: 120, frameCount: 10)
        let consumer = Task {
            var count = 0
            for try await _ in session.samples { count += 1 }
            return count
        }
        let accepted = Atomic<Int>(0)
        let producer = Task {
            for index in 0..<clip.frameCount {
                try await session.encode(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
                accepted.add(1, ordering: .sequentiallyConsistent)
            }
        }
        // The encoder holds frame 0; the queue takes `depth` more; the next
        // call must wait for the encoder.
        for _ in 0..<1000 where accepted.load(ordering: .sequentiallyConsistent) < depth + 1 {
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(accepted.load(ordering: .sequentiallyConsistent) == depth + 1)
        gate.open()
        try await producer.value
        #expect(accepted.load(ordering: .sequentiallyConsistent) == clip.frameCount)
        try await session.finish()
        #expect(try await consumer.value == clip.frameCount)
    }
}

/// A gate the encoding thread waits at until the test opens it.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let isOpen = Atomic<Bool>(false)
    func wait() {
        guard !isOpen.load(ordering: .sequentiallyConsistent) else { return }
        semaphore.wait()
        semaphore.signal()
    }
    func open() {
        isOpen.store(true, ordering: .sequentiallyConsistent)
        semaphore.signal()
    }
}

/// x264 behind a gate: `encode` waits until the gate opens, standing for an
/// encoder slower than its producer.
final class GatedBackend: EncoderBackend {
    var maxFrameDelayCount: Int { 0 }
    let name = "gated"
    private let inner: any EncoderBackend
    private let gate: Gate
    init(wrapping inner: any EncoderBackend, gate: Gate) {
        self.inner = inner
        self.gate = gate
    }
    var parameterSets: [[UInt8]] { inner.parameterSets }
    func encode(_ frame: PixelBuffer, pts: Int64, forceKeyFrame: Bool) throws(MediaError) -> [EncodedFrame] {
        gate.wait()
        return try inner.encode(frame, pts: pts, forceKeyFrame: forceKeyFrame)
    }
    func finish() throws(MediaError) -> [EncodedFrame] { try inner.finish() }
    func setAverageBitRate(_ bitsPerSecond: Int) throws(MediaError) { try inner.setAverageBitRate(bitsPerSecond) }
}
