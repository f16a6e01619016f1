import CFFmpeg

#if canImport(Glibc)
    import Glibc
#endif

/// The error messages FFmpeg logs while a hardware decoder works, kept so
/// that errors and fallback reasons can say what the hardware reported.
///
/// libavcodec's hwaccels turn a failed VA-API or CUDA call into a bare
/// `AVERROR(EIO)` or `AVERROR(EINVAL)`; the driver's status (`vaEndPicture`
/// returning `VA_STATUS_ERROR_UNIMPLEMENTED`, say) is only written to the
/// log. ``capture(_:)`` collects the lines logged at `AV_LOG_ERROR` or worse
/// on the calling thread while its body runs. Hardware decoders run with one
/// thread, so libavcodec, its hwaccel, the frames context and libva's
/// messages (forwarded by libavutil's VA-API device) all log on the thread
/// that called into libavcodec.
///
/// The first capture installs a process-wide `av_log` callback (libavutil
/// offers no other hook) that passes every message on to
/// `av_log_default_callback`, so FFmpeg's own output does not change; an
/// application that installs its own callback afterwards turns the capture
/// off, and errors then carry libavcodec's return code only.
package enum HardwareLog {
    /// The per-thread slot holding the capture in progress (a retained ``Lines``).
    private static let slot: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key, nil)
        precondition(created == 0, "pthread_key_create failed: \(created)")
        CFFmpeg_install_hardware_log_callback()
        return key
    }()

    /// The lines of one capture.
    final class Lines {
        var lines: [String] = []
    }

    /// Runs `body`; returns its result and the error lines logged on this
    /// thread meanwhile, without their `[h264 @ 0x…]` prefixes. Captures nest.
    package static func capture<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> (result: T, errors: [String]) {
        let key = slot
        let lines = Lines()
        let previous = pthread_getspecific(key)
        let retained = Unmanaged.passRetained(lines)
        pthread_setspecific(key, retained.toOpaque())
        defer {
            pthread_setspecific(key, previous)
            retained.release()
        }
        let result = try body()
        return (result, lines.lines)
    }

    /// The capture running on this thread, if any.
    fileprivate static func current() -> Lines? {
        guard let pointer = pthread_getspecific(slot) else { return nil }
        return Unmanaged<Lines>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Joins captured lines for a message: "a; b" (trailing periods dropped).
    package static func summary(_ lines: [String]) -> String {
        lines.map { $0.hasSuffix(".") ? String($0.dropLast()) : $0 }.joined(separator: "; ")
    }

    /// A log line without its leading "[name @ 0x…] " context prefixes and trailing newline.
    fileprivate static func message(of line: String) -> String {
        var text = Substring(line)
        while text.hasPrefix("["), let end = text.firstIndex(of: "]") {
            text = text[text.index(after: end)...].drop { $0 == " " }
        }
        while let last = text.last, last.isNewline || last == " " { text = text.dropLast() }
        return String(text)
    }
}

/// Receives each line at `AV_LOG_ERROR` or worse from the shim's `av_log`
/// callback (`CFFmpeg_hardware_log_callback`, which has already passed the
/// message on to `av_log_default_callback`) and keeps it when this thread is
/// capturing. It lives in this module, the only one that imports CFFmpeg, so
/// the C shim calls no higher module.
@_cdecl("CodecSessions_hardwareLogLine")
func hardwareLogLine(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line, let lines = HardwareLog.current() else { return }
    let message = HardwareLog.message(of: String(cString: line))
    if !message.isEmpty { lines.lines.append(message) }
}
