import MediaCore
import MediaIO
import TestSupport
import Testing

@testable import EncodeSession
@testable import NativeCodecs

/// Every x264/x265 encoder a session opens is closed when the session is
/// invalidated or released, on success and on failure.
@Suite(.serialized) struct LiveObjectTests {
    @Test(arguments: [CodecType.h264, .hevc])
    func invalidateAndReleaseFreeTheEncoder(codec: CodecType) throws {
        let clip = SyntheticClip(width: 160, height: 120, frameCount: 8)
        weak var invalidatedBackend: AnyObject?
        weak var releasedBackend: AnyObject?
        do {
            let session = try CompressionSession(width: 160, height: 120, codec: codec, encoder: .software)
            invalidatedBackend = session.backendObject
            #expect(invalidatedBackend != nil)
            for index in 0..<4 {
                _ = try session.encode(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
            }
            session.invalidate()
            #expect(invalidatedBackend == nil, "invalidate() must close the encoder at once")
        }
        do {
            let session = try CompressionSession(width: 160, height: 120, codec: codec, encoder: .software)
            releasedBackend = session.backendObject
            _ = try encodeClip(session, clip: clip)
        }
        #expect(releasedBackend == nil, "releasing the session must close the encoder")
    }

    @Test func encodersCountThemselves() throws {
        let kinds: [(CodecType, LiveObjects.Kind)] = [(.h264, .x264Encoder), (.hevc, .x265Encoder)]
        for (codec, kind) in kinds {
            let configuration = EncoderConfiguration(
                width: 160, height: 120, codec: codec, properties: .init(), timescale: 90_000, frameRate: (30, 1),
                keyFrameInterval: nil, bitDepth: 8)
            weak var weakBackend: AnyObject?
            do {
                let backend = try EncoderFactory.builtIn.software(configuration)
                weakBackend = backend
                // Other suites may hold encoders of this kind at the same time,
                // so only a lower bound holds while this one is alive.
                #expect(LiveObjects.count(kind) >= 1)
            }
            #expect(weakBackend == nil)
        }
    }
}
