import DecodeSession
import EncodeSession
import FormatConv
import MediaCore
import TestSupport
import Testing

/// Both sessions take one ``CodecBackend`` value, report the backend in use
/// the same way, and can be invalidated the same way.
@Suite(.serialized, .enabled(if: TestVADriver.compilerAvailable, "the test VA driver needs gcc"))
struct SymmetricBackendTests {
    @Test func softwareOnBothSides() throws {
        let encoder = try CompressionSession(width: 160, height: 120, codec: .h264, encoder: .software)
        #expect(encoder.backendInUse == .software)
        #expect(encoder.fallbackReason == nil)
        let decoder = try DecompressionSession(formatDescription: encoder.formatDescription, decoder: .software)
        #expect(decoder.backendInUse == .software)
        #expect(decoder.requestedBackend == .software)
        #expect(decoder.fallbackReason == nil)
    }

    @Test func vaapiOnBothSidesNamesTheDevice() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory)
        let encoder = try CompressionSession(
            width: 160, height: 120, codec: .h264, encoder: .vaapi(device: device))
        #expect(encoder.backendInUse == .vaapi(device: device))
        let decoder = try DecompressionSession(
            formatDescription: encoder.formatDescription, decoder: .vaapi(device: device))
        #expect(decoder.backendInUse == .vaapi(device: device))
        #expect(decoder.backend == "vaapi")
    }

    /// The one-codec hardware questions, asked on both sides, answer what a
    /// `.hardware` session of that codec does: it opens exactly when the
    /// answer is yes (on a machine without a device, both say no).
    @Test(arguments: CodecType.allCases)
    func hardwareSupportQueriesAgreeWithSessions(codec: CodecType) throws {
        let software = try CompressionSession(width: 160, height: 120, codec: codec, encoder: .software)
        #expect(software.backend == (codec == .h264 ? "x264" : "x265"))
        let encodeOpens = (try? CompressionSession(width: 160, height: 120, codec: codec, encoder: .hardware)) != nil
        #expect(CompressionSession.isHardwareEncodeSupported(codec) == encodeOpens, "\(codec)")
        let decodeOpens =
            (try? DecompressionSession(formatDescription: software.formatDescription, decoder: .hardware)) != nil
        #expect(DecompressionSession.isHardwareDecodeSupported(codec) == decodeOpens, "\(codec)")
        let decoder = try DecompressionSession(formatDescription: software.formatDescription, decoder: .software)
        #expect(decoder.backend == "libavcodec")
        // The names sessions report are the names the capability lists use.
        #expect(CompressionSession.encoders().contains { $0.name == software.backend && $0.codec == codec })
        #expect(DecompressionSession.decoders().contains { $0.name == decoder.backend && $0.codec == codec })
    }

    @Test func encoderRefusesNVDEC() {
        let error = #expect(throws: MediaError.self) {
            try CompressionSession(width: 160, height: 120, codec: .h264, encoder: .nvdec())
        }
        #expect(error?.code == .unsupported)
        #expect(error?.message.hasPrefix("nvdec: NVDEC only decodes") == true)
    }

    /// Without an NVIDIA driver, `.nvdec` fails with the loader's reason and
    /// `.automatic` falls back naming it; with one, it decodes.
    @Test func nvdecIsReportedOrUsed() throws {
        let encoder = try CompressionSession(width: 160, height: 120, codec: .h264, encoder: .software)
        do {
            let session = try DecompressionSession(formatDescription: encoder.formatDescription, decoder: .nvdec())
            #expect(session.backendInUse == .nvdec(device: 0))
        } catch {
            #expect(error.code == .unavailable)
            #expect(error.message.contains("NVDEC") || error.message.contains("cuda"), "\(error.message)")
        }
    }

    @Test func decodeInvalidateMirrorsEncodeInvalidate() throws {
        let encoder = try CompressionSession(width: 160, height: 120, codec: .h264, encoder: .software)
        let clip = SyntheticClipFrames(width: 160, height: 120)
        var samples: [CompressedSample] = []
        for index in 0..<5 {
            samples += try encoder.encode(clip.frame(index), pts: MediaTime(value: Int64(index), timescale: 30))
        }
        samples += try encoder.finish()
        #expect(samples.count == 5)
        encoder.invalidate()
        #expect(encoder.isInvalidated)
        #expect(throws: MediaError.self) { try encoder.finish() }

        let decoder = try DecompressionSession(formatDescription: encoder.formatDescription, decoder: .software)
        var delivered = 0
        for sample in samples.prefix(3) { delivered += try decoder.decode(sample).count }
        decoder.invalidate()
        #expect(decoder.isInvalidated)
        let error = #expect(throws: MediaError.self) { try decoder.decode(samples[3]) }
        #expect(error?.code == .invalidated)
        #expect(throws: MediaError.self) { try decoder.finish() }
        decoder.flush()  // does nothing, does not trap
        // Every sample given before invalidate() is either delivered or listed as dropped.
        let statistics = decoder.statistics
        #expect(statistics.submitted == 3)
        #expect(statistics.decoded == delivered)
        #expect(statistics.dropped == 3 - delivered)
        #expect(decoder.drops.allSatisfy { $0.reason == "discarded by invalidate()" })
    }
}

/// A few distinct I420 frames without MediaIO.
struct SyntheticClipFrames {
    var width: Int
    var height: Int

    func frame(_ index: Int) -> PixelBuffer {
        let buffer = try! PixelBuffer(width: width, height: height, format: .i420)
        for plane in 0..<buffer.planeCount {
            buffer.withUnsafeMutableBytes(ofPlane: plane) { bytes, stride in
                for offset in 0..<bytes.count { bytes[offset] = UInt8(truncatingIfNeeded: offset / 7 + index * 9) }
                _ = stride
            }
        }
        return buffer
    }
}
