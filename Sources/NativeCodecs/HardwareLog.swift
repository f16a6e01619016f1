import CFFmpeg
import MediaCore

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
/// The first capture, or the first FFmpeg object NativeCodecs makes
/// (``installLogCallback()``), installs a process-wide `av_log` callback
/// (libavutil offers no other hook) that passes every line at or above
/// `av_log_get_level()` to MediaCore's ``CodecLog`` handler instead of
/// standard error; an application that installs its own callback afterwards
/// turns the capture and the forwarding off, and errors then carry
/// libavcodec's return code only.
package enum HardwareLog {
    /// The per-thread slot holding the capture in progress (a retained ``Lines``).
    private static let slot: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key, nil)
        precondition(created == 0, "pthread_key_create failed: \(created)")
        CFFmpeg_install_log_callback()
        return key
    }()

    /// Installs the `av_log` callback (once; later calls do nothing), so that
    /// FFmpeg's lines go to ``CodecLog`` rather than standard error.
    package static func installLogCallback() { _ = slot }

    /// The lines of one capture.
    final class Lines {
        var lines: [String] = []
        /// Whether lines also go to ``CodecLog`` while the capture runs.
        var forwards = true
    }

    /// Runs `body`; returns its result and the error lines logged on this
    /// thread meanwhile, without their `[h264 @ 0x…]` prefixes. Captures nest.
    /// With `forwarding` false, nothing this thread logs meanwhile reaches
    /// ``CodecLog`` (a trial whose failure the caller reports itself).
    package static func capture<T, E: Error>(forwarding: Bool = true, _ body: () throws(E) -> T) throws(E) -> (
        result: T, errors: [String]
    ) {
        let key = slot
        let lines = Lines()
        lines.forwards = forwarding
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

/// Receives each line FFmpeg logs from the shim's `av_log` callback
/// (`CFFmpeg_log_callback`): keeps it when it is an error and this thread is
/// capturing, and hands it to ``CodecLog`` with its level and the name of the
/// codec or format that logged it. It lives in this module, the only one
/// that imports CFFmpeg, so the C shim calls no higher module.
@_cdecl("CodecSessions_libavLogLine")
func libavLogLine(_ level: Int32, _ name: UnsafePointer<CChar>?, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    let current = HardwareLog.current()
    let capture = level <= CFFmpeg_AV_LOG_ERROR() ? current : nil
    let handler = current?.forwards == false ? nil : CodecLog.currentHandler
    // Nobody listens: no text is made.
    guard capture != nil || handler != nil else { return }
    let message = HardwareLog.message(of: String(cString: line))
    guard !message.isEmpty else { return }
    capture?.lines.append(message)
    guard let handler else { return }
    let logLevel: LogLevel =
        switch level {
        case ...CFFmpeg_AV_LOG_ERROR(): .error
        case ...CFFmpeg_AV_LOG_WARNING(): .warning
        case ...CFFmpeg_AV_LOG_INFO(): .info
        default: .debug
        }
    handler(
        LogMessage(
            level: logLevel, subsystem: name.map { "ffmpeg." + String(cString: $0) } ?? "ffmpeg", message: message))
}
