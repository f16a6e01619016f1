import FormatConv
import MediaCore
import Synchronization
import TestSupport
import Testing

@testable import DecodeSession
@testable import NativeCodecs
@testable import PixelTransfer

/// A picture of the fake decoder: a 16×16 I420 buffer whose first byte is
/// the token of the sample it came from.
final class FakePicture: DecoderPicture {
    var hdr10: HDR10Metadata? { nil }
    let token: Int64
    let width = 16
    let height = 16
    let damage: String?
    let nativeFormat: PixelFormat? = .i420
    let formatName = "yuv420p"

    init(token: Int64, damage: String? = nil) {
        self.token = token
        self.damage = damage
    }

    func adoptedBuffer() -> PixelBuffer? {
        let buffer = try! PixelBuffer(width: width, height: height, format: .i420)
        buffer.withUnsafeMutableBytes(ofPlane: 0) { bytes, _ in bytes[0] = UInt8(truncatingIfNeeded: token) }
        return buffer
    }

    func withPlanes(
        _ body: (_ planes: [(base: UnsafeRawPointer, stride: Int)], _ format: LibavPixelFormat) throws(MediaError)
            -> Void
    ) throws(MediaError) {
        let buffer = adoptedBuffer()!
        var planes: [(base: UnsafeRawPointer, stride: Int)] = []
        for plane in 0..<buffer.planeCount {
            buffer.withUnsafeBytes(ofPlane: plane) { bytes, stride in planes.append((bytes.baseAddress!, stride)) }
        }
        try withExtendedLifetime(buffer) { () throws(MediaError) in try body(planes, LibavPixelFormat(.i420)) }
    }
}

/// What a fake decoder does wrong, and when: the `n`-th call of `send`
/// (counted over every fake the script made, from 1) fails.
final class FakeScript: Sendable {
    struct State {
        var sends = 0
        var failSendAt: Set<Int> = []
        var failureIsInvalidData = false
        var decodersMade: [String] = []
    }

    let state: Mutex<State>

    init(failSendAt: Set<Int> = [], invalidData: Bool = false) {
        state = Mutex(State(failSendAt: failSendAt, failureIsInvalidData: invalidData))
    }
}

/// A decoder that "decodes" every sample into a picture carrying its token,
/// holding `reorderDelay` pictures back the way B-frame decoders do.
final class FakeDecoder: DecoderBackend {
    func setSkipsNonIntraPictures(_ skips: Bool) {}
    let name: String
    let backendInUse: CodecBackend
    let softwareFallbackReason: String? = nil
    let hardwareRefused: String? = nil
    private let script: FakeScript
    private let reorderDelay: Int
    private var held: [Int64] = []
    private var draining = false

    init(hardware: Bool, script: FakeScript, reorderDelay: Int) {
        name = hardware ? "vaapi" : "libavcodec"
        backendInUse = hardware ? .vaapi(device: "fake") : .software
        self.script = script
        self.reorderDelay = reorderDelay
        script.state.withLock { $0.decodersMade.append(name) }
    }

    func withHardwareErrors(_ text: String) -> String { text }

    func send(_ data: [UInt8], token: Int64, isKeyframe: Bool) throws(MediaError) -> Bool {
        let (fail, invalid) = script.state.withLock { state in
            state.sends += 1
            return (state.failSendAt.contains(state.sends), state.failureIsInvalidData)
        }
        if fail {
            let message = "fake \(name) decoder failed at this sample"
            throw invalid ? .invalidData(message) : .backendFailure(message)
        }
        draining = false
        held.append(token)
        return true
    }

    func sendEndOfStream() throws(MediaError) { draining = true }

    func receive() throws(MediaError) -> (any DecoderPicture)? {
        guard held.count > (draining ? 0 : reorderDelay) else { return nil }
        return FakePicture(token: held.removeFirst())
    }

    func flush() {
        held = []
        draining = false
    }
}

/// The session's recovery logic driven by the fake decoder: a hardware
/// failure at any point is replayed in software without losing or repeating
/// a picture; an overflowing replay cache drops explicitly; bad data drops to
/// the next keyframe.
struct FakeDecoderRecoveryTests {
    static let description: FormatDescription = {
        // Any valid description will do: the fakes never read it.
        let sps = [UInt8]([
            0x67, 0x64, 0x00, 0x0A, 0xAC, 0xD9, 0x42, 0x8D, 0x80, 0x88, 0x00, 0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x03,
            0x01, 0xE0, 0x78, 0x91, 0x2C, 0xB0,
        ])
        let pps = [UInt8]([0x68, 0xEB, 0xE3, 0xCB, 0x22, 0xC0])
        return try! FormatDescription(h264ParameterSets: [sps, pps])
    }()

    static func samples(_ count: Int, keyframeEvery gop: Int, bytes: Int = 100) -> [CompressedSample] {
        (0..<count).map { index in
            // One slice NAL unit of `bytes` bytes with its 4-byte length: an
            // IDR or a reference P-slice, first_mb_in_slice 0, then filler.
            let unit =
                [UInt8]([index % gop == 0 ? 0x65 : 0x41, 0x80])
                + [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: bytes - 6)
            let length = UInt32(unit.count)
            return CompressedSample(
                data: [
                    UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF),
                    UInt8(length & 0xFF),
                ]
                    + unit,
                formatDescription: description, pts: MediaTime(value: Int64(index), timescale: 30),
                dts: MediaTime(value: Int64(index), timescale: 30), duration: MediaTime(value: 1, timescale: 30),
                isKeyframe: index % gop == 0)
        }
    }

    static func session(
        _ script: FakeScript, backend: CodecBackend = .automatic, reorderDelay: Int = 2,
        replayByteLimit: Int = DecompressionSession.defaultReplayByteLimit
    ) throws -> DecompressionSession {
        let factory = DecoderFactory(
            software: { _, _ throws(MediaError) in
                FakeDecoder(hardware: false, script: script, reorderDelay: reorderDelay)
            },
            hardware: { _, _, _ throws(MediaError) in
                FakeDecoder(hardware: true, script: script, reorderDelay: reorderDelay)
            })
        return try DecompressionSession(
            formatDescription: description, decoder: backend, output: .init(), threadCount: nil,
            automaticDevicePath: nil, factory: factory, replayByteLimit: replayByteLimit)
    }

    /// Sends 1…60 (counted over both fakes) for a 60-sample stream with a
    /// keyframe every 10: failures before any picture came out, after the
    /// first group, right after a keyframe while the previous group's pictures
    /// are still held, and at the last sample.
    @Test(arguments: [1, 3, 10, 11, 17, 21, 22, 40, 60])
    func hardwareFailureAnywhereLosesAndRepeatsNothing(failAt: Int) throws {
        let script = FakeScript(failSendAt: [failAt])
        let session = try Self.session(script)
        #expect(session.backendInUse == .vaapi(device: "fake"))
        let samples = Self.samples(60, keyframeEvery: 10)
        let delivered = try decodeAll(session, samples).map(\.pts.value)
        #expect(delivered == Array(0..<60), "failure at send \(failAt)")
        #expect(session.drops.isEmpty, "\(session.drops)")
        #expect(session.statistics == DecodeStatistics(submitted: 60, decoded: 60))
        #expect(session.backendInUse == .software)
        #expect(session.fallbackReason?.contains("fake vaapi decoder failed") == true)
        #expect(script.state.withLock { $0.decodersMade } == ["vaapi", "libavcodec"])
    }

    /// In a 300-picture group with no keyframe after the first, a failure at
    /// 250 replays 250 samples: everything is still delivered once.
    @Test func longGroupReplaysWithinTheByteLimit() throws {
        let script = FakeScript(failSendAt: [250])
        let session = try Self.session(script)
        let delivered = try decodeAll(session, Self.samples(300, keyframeEvery: 1000)).map(\.pts.value)
        #expect(delivered == Array(0..<300))
        #expect(session.replayCacheOverflows == 0)
    }

    /// The same group with a 10 KB cache overflows at sample 100: the failure
    /// at 250 drops the pictures in flight, says why, and counts the overflow;
    /// nothing is repeated and the stream resumes at the next keyframe.
    @Test func overflowingReplayCacheDropsExplicitly() throws {
        let script = FakeScript(failSendAt: [250])
        let session = try Self.session(script, replayByteLimit: 10_000)
        let delivered = try decodeAll(session, Self.samples(320, keyframeEvery: 300)).map(\.pts.value)
        #expect(session.replayCacheOverflows == 1)
        #expect(Set(delivered).count == delivered.count, "a picture was delivered twice")
        #expect(delivered == delivered.sorted())
        // 0…246 came out before the failure, 247…249 were in flight (two held
        // back plus the failing one), 251…299 wait for the keyframe at 300.
        #expect(delivered == Array(0..<247) + Array(300..<320))
        let dropped = session.drops.map(\.pts.value)
        #expect(dropped == Array(247..<300))
        #expect(session.drops.prefix(3).allSatisfy { $0.reason.contains("outgrew the replay cache (10000 bytes)") })
        #expect(session.statistics == DecodeStatistics(submitted: 320, decoded: 267, dropped: 53))
    }

    /// Bad data in software: the picture in flight and everything until the
    /// next keyframe is dropped, with no decoder rebuilt.
    @Test func invalidDataDropsToTheNextKeyframe() throws {
        let script = FakeScript(failSendAt: [15], invalidData: true)
        let session = try Self.session(script, backend: .software)
        let delivered = try decodeAll(session, Self.samples(30, keyframeEvery: 10)).map(\.pts.value)
        // Send 15 is sample 14; 12 and 13 were held in the decoder behind it.
        #expect(delivered == Array(0..<12) + Array(20..<30))
        // 15…19 are dropped as they arrive; 12…14 when the keyframe drains the decoder.
        #expect(session.drops.map(\.pts.value) == Array(15..<20) + Array(12..<15))
        // Typed reasons, and where decoding recovered.
        #expect(
            session.drops.map(\.kind)
                == Array(repeating: .waitingForKeyframe, count: 5) + [.damaged, .damaged, .notReturned])
        #expect(session.recoveries.count == 1)
        #expect(session.recoveries.first?.pts.value == 20)
        #expect(session.recoveries.first?.droppedSamples == 8)
        #expect(session.recoveries.first?.cause.contains("fake libavcodec decoder failed") == true)
        #expect(script.state.withLock { $0.decodersMade } == ["libavcodec"])
        #expect(session.statistics == DecodeStatistics(submitted: 30, decoded: 22, dropped: 8))
    }

    /// `.vaapi` does not fall back: the failure throws, the pictures in
    /// flight are dropped, and the device is tried again at the next keyframe.
    @Test func explicitHardwareThrowsInsteadOfFallingBack() throws {
        let script = FakeScript(failSendAt: [5])
        let session = try Self.session(script, backend: .vaapi(device: "fake"))
        var delivered: [Int64] = []
        var failures = 0
        for sample in Self.samples(20, keyframeEvery: 10) {
            do {
                delivered += try session.decode(sample).map(\.pts.value)
            } catch {
                failures += 1
                #expect(error.code == .backendFailure)
            }
        }
        delivered += try session.finish().map(\.pts.value)
        #expect(failures == 1)
        #expect(delivered == Array(0..<2) + Array(10..<20))
        #expect(
            session.drops.map(\.kind) == [.decoderFailure, .decoderFailure, .decoderFailure]
                + Array(repeating: .waitingForKeyframe, count: 5))
        #expect(session.recoveries.map(\.pts.value) == [10])
        #expect(session.recoveries.first?.droppedSamples == 8)
        #expect(session.backendInUse == .vaapi(device: "fake"))
        #expect(session.statistics == DecodeStatistics(submitted: 20, decoded: 12, dropped: 8))
    }
}
