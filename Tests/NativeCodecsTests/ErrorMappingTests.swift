import MediaCore
import Testing

@testable import NativeCodecs

#if canImport(Glibc)
    import Glibc
#endif

/// Every C library's status becomes a ``MediaError`` in exactly one place;
/// these pin each mapping down.
struct ErrorMappingTests {
    /// `AVERROR(e)` is `-e` for POSIX errors; libavutil describes them with the
    /// C library's own `strerror`.
    static func averror(_ errno: Int32) -> Int32 { -errno }

    @Test(
        "AVERROR → MediaError.Code, library and status kept",
        arguments: [
            (averror(ENOMEM), MediaError.Code.outOfMemory),
            (averror(ENOSYS), .invalidData),
            (averror(ENOENT), .system),
            (averror(EACCES), .system),
            (averror(EINVAL), .invalidArgument),
            (averror(EIO), .backendFailure),
            (averror(EPIPE), .backendFailure),
        ])
    func libavPOSIXErrors(status: Int32, expected: MediaError.Code) {
        let error = Libav.error(status, while: "avcodec_send_packet")
        #expect(error.code == expected)
        #expect(error.library == "libav")
        #expect(error.status == Int(status))
        let text = String(cString: strerror(-status))
        #expect(error.message == "avcodec_send_packet failed: \(text)", "\(error.message)")
    }

    @Test func libavInvalidDataAndOverrides() {
        let invalid = Libav.error(Libav.invalidData, while: "reading a packet")
        #expect(invalid.code == .invalidData)
        // FFmpeg's documented text for AVERROR_INVALIDDATA.
        #expect(invalid.message == "reading a packet failed: Invalid data found when processing input")
        // A caller's context may name the kind (a device that cannot be
        // opened is unavailable), except when memory ran out.
        #expect(Libav.error(Self.averror(EIO), while: "open", as: .unavailable).code == .unavailable)
        #expect(Libav.error(Libav.outOfMemory, while: "open", as: .unavailable).code == .outOfMemory)
        #expect(throws: Never.self) { try Libav.check(0, while: "fine") }
        #expect(throws: MediaError.self) { try Libav.check(-1, while: "not fine") }
    }

    @Test func libavSendReceiveResults() throws {
        #expect(try Libav.result(0, "avcodec_receive_frame") == .done)
        #expect(try Libav.result(Libav.tryAgain, "avcodec_receive_frame") == .tryAgain)
        #expect(try Libav.result(Libav.endOfFile, "avcodec_receive_frame") == .endOfStream)
        #expect(Libav.tryAgain == -EAGAIN)
        do {
            _ = try Libav.result(Libav.invalidData, "avcodec_send_packet")
            Issue.record("AVERROR_INVALIDDATA must be a failure")
        } catch {
            #expect(error.isInvalidData)
            #expect(error.mediaError.code == .invalidData)
            #expect(error.description.hasPrefix("avcodec_send_packet failed: Invalid data found"))
        }
        #expect(Libav.isEndOfFile(Libav.endOfFile))
        #expect(!Libav.isEndOfFile(0))
    }

    @Test("VAStatus → MediaError with vaErrorStr's text and the raw status")
    func vaStatus() {
        #expect(throws: Never.self) { try VAStatusError.check(0, "vaCreateConfig") }
        do {
            // VA_STATUS_ERROR_ALLOCATION_FAILED (va.h: 0x00000002)
            try VAStatusError.check(2, "vaCreateSurfaces", device: "/dev/dri/renderD128", as: .unavailable)
            Issue.record("a failed status must throw")
        } catch {
            #expect(error.code == .unavailable)
            #expect(error.library == "libva")
            #expect(error.status == 2)
            #expect(
                error.message
                    == "vaCreateSurfaces failed on /dev/dri/renderD128: resource allocation failed (VA status 2)")
        }
        do {
            // VA_STATUS_ERROR_UNIMPLEMENTED (0x00000014), without a device.
            try VAStatusError.check(0x14, "vaEndPicture")
            Issue.record("a failed status must throw")
        } catch {
            #expect(error.code == .backendFailure)
            #expect(error.message == "vaEndPicture failed: the requested function is not implemented (VA status 20)")
        }
    }

    @Test func x264AndX265Returns() {
        #expect(throws: Never.self) { try X265Status.check(0, "encoder_encode") }
        do {
            try X265Status.check(-1, "encoder_encode")
            Issue.record("a negative return must throw")
        } catch {
            #expect(
                error == MediaError(.backendFailure, "x265: encoder_encode returned -1", library: "x265", status: -1))
        }
        let log = X264Log()
        do {
            try X264Status.check(-1, "x264_encoder_encode", log: log)
            Issue.record("a negative return must throw")
        } catch {
            #expect(error.code == .backendFailure)
            #expect(error.library == "x264" && error.status == -1)
            #expect(error.message.hasPrefix("x264: x264_encoder_encode returned -1"))
        }
    }
}
