import CVAAPI
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// The one VA-API device rule, used by the encoder, the decoder and the
/// capability probe alike: the device the caller names (`--device`, a
/// backend's `device:`), else `$CODECS_VAAPI_DEVICE`, else every DRM render
/// node under `/dev/dri` (`renderD128`, `renderD129`, …) in order.
package enum VAAPIDevices {
    /// The environment variable naming the default device (also set by
    /// `scripts/with-test-vaapi`).
    package static let environmentVariable = "CODECS_VAAPI_DEVICE"

    /// The render nodes tried when neither a device nor the environment names one.
    package static let renderNodes = (128...135).map { "/dev/dri/renderD\($0)" }

    /// The devices to try for `requested`, in order; or why there are none.
    package static func candidates(_ requested: String?) -> Result<[String], MediaError> {
        if let requested, !requested.isEmpty { return .success([requested]) }
        if let value = getenv(environmentVariable), value[0] != 0 { return .success([String(cString: value)]) }
        let present = renderNodes.filter { access($0, F_OK) == 0 }
        guard !present.isEmpty else {
            return .failure(
                .unavailable(
                    "no VA-API render node (/dev/dri/renderD128…135 absent and \(environmentVariable) not set)"))
        }
        return .success(present)
    }

    /// The device to open for `requested`: the first of ``candidates(_:)``.
    package static func resolve(_ requested: String?) throws(MediaError) -> String {
        try candidates(requested).get()[0]
    }
}

/// The one place libva status codes become ``MediaError``s: success passes;
/// anything else is an error of kind `code` (`.backendFailure` unless the
/// caller names another) that names the call, the device and `vaErrorStr`'s
/// text, and keeps the raw `VAStatus`.
package enum VAStatusError {
    package static func check(
        _ status: VAStatus, _ call: String, device: String? = nil, as code: MediaError.Code = .backendFailure
    ) throws(MediaError) {
        guard status != CVAAPI_STATUS_SUCCESS() else { return }
        let place = device.map { " on \($0)" } ?? ""
        throw MediaError(
            code, "\(call) failed\(place): \(String(cString: vaErrorStr(status))) (VA status \(status))",
            library: "libva", status: Int(status))
    }
}

/// Collects the messages libva would print to standard error, so that a
/// failed driver load can be explained.
private final class LibvaMessages {
    var lines: [String] = []
}

/// Keeps one libva message and hands it to ``CodecLog`` (subsystem "libva").
private func collectLibvaMessage(
    _ context: UnsafeMutableRawPointer?, _ message: UnsafePointer<CChar>?, level: LogLevel
) {
    guard let context, let message else { return }
    let sink = Unmanaged<LibvaMessages>.fromOpaque(context).takeUnretainedValue()
    var text = String(cString: message)
    while text.last == "\n" { text.removeLast() }
    sink.lines.append(text)
    CodecLog.log(level, subsystem: "libva", text)
}

private let libvaErrorCallback: VAMessageCallback = { context, message in
    collectLibvaMessage(context, message, level: .error)
}

private let libvaInfoCallback: VAMessageCallback = { context, message in
    collectLibvaMessage(context, message, level: .info)
}

/// One opened DRM device and its initialized `VADisplay`; `deinit` terminates
/// the display and closes the node.
package final class VAAPIDisplay {
    package let display: VADisplay
    package let path: String
    /// The VA-API version the driver speaks (`vaInitialize`'s major.minor).
    package let apiVersion: String
    private let descriptor: Int32
    private let messages: LibvaMessages
    private let kind: LiveObjects.Kind

    /// Opens `path` and initializes libva on it; errors are `.unavailable`
    /// and say which driver libva tried and what it said.
    package init(path: String, kind: LiveObjects.Kind = .vaDisplay) throws(MediaError) {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw MediaError(
                .unavailable, "no VA-API render node: cannot open \(path): \(String(cString: strerror(code)))",
                library: "libc",
                status: Int(code))
        }
        guard let display = vaGetDisplayDRM(fd) else {
            close(fd)
            throw .unavailable("no VA-API render node: \(path) is not a DRM render node (vaGetDisplayDRM)")
        }
        let messages = LibvaMessages()
        let context = Unmanaged.passUnretained(messages).toOpaque()
        _ = vaSetErrorCallback(display, libvaErrorCallback, context)
        _ = vaSetInfoCallback(display, libvaInfoCallback, context)
        var major: Int32 = 0
        var minor: Int32 = 0
        let status = vaInitialize(display, &major, &minor)
        do throws(MediaError) {
            try VAStatusError.check(status, "vaInitialize", device: path, as: .unavailable)
        } catch {
            let explanation = Self.driverDescription(messages.lines)
            _ = vaTerminate(display)
            close(fd)
            throw MediaError(
                error.code, "\(error.message); \(explanation)", library: error.library, status: error.status)
        }
        self.display = display
        self.path = path
        self.descriptor = fd
        self.messages = messages
        self.kind = kind
        self.apiVersion = "\(major).\(minor)"
        LiveObjects.increment(kind)
    }

    deinit {
        _ = vaTerminate(display)
        close(descriptor)
        LiveObjects.decrement(kind)
    }

    /// The driver's vendor string.
    package var vendor: String? { vaQueryVendorString(display).map { String(cString: $0) } }

    /// Which driver libva tried, from `LIBVA_DRIVER_NAME` or its own messages.
    private static func driverDescription(_ lines: [String]) -> String {
        var parts: [String] = []
        if let name = getenv("LIBVA_DRIVER_NAME") { parts.append("LIBVA_DRIVER_NAME=\(String(cString: name))") }
        if let path = getenv("LIBVA_DRIVERS_PATH") { parts.append("LIBVA_DRIVERS_PATH=\(String(cString: path))") }
        let tried = lines.compactMap { line -> String? in
            guard let range = line.firstRange(of: "Trying to open ") else { return nil }
            return String(line[range.upperBound...])
        }
        if !tried.isEmpty { parts.append("driver tried: \(tried.joined(separator: ", "))") }
        let errors = lines.filter { !$0.contains("Trying to open") && !$0.contains("VA-API version") }
        if !errors.isEmpty { parts.append("libva said: \(errors.joined(separator: "; "))") }
        return parts.isEmpty ? "no driver found for this device" : parts.joined(separator: "; ")
    }

    /// The entrypoints the driver offers for `profile` (none when it lacks it).
    package func entrypoints(for profile: VAProfile, name: String) throws(MediaError) -> [VAEntrypoint] {
        var profiles = [VAProfile](repeating: VAProfileNone, count: Int(max(1, vaMaxNumProfiles(display))))
        var profileCount: Int32 = 0
        try VAStatusError.check(vaQueryConfigProfiles(display, &profiles, &profileCount), "vaQueryConfigProfiles")
        guard profiles.prefix(Int(profileCount)).contains(profile) else { return [] }
        var entrypoints = [VAEntrypoint](
            repeating: VAEntrypoint(rawValue: 0), count: Int(max(1, vaMaxNumEntrypoints(display))))
        var count: Int32 = 0
        try VAStatusError.check(
            vaQueryConfigEntrypoints(display, profile, &entrypoints, &count), "vaQueryConfigEntrypoints(\(name))")
        return Array(entrypoints.prefix(Int(count)))
    }

    /// The probed profiles the driver offers, each with its probed entrypoints
    /// and the surface layouts its `RTFormat` attribute names.
    package func profiles() throws(MediaError) -> [VAAPIProfileInfo] {
        var result: [VAAPIProfileInfo] = []
        for (profile, codec, name) in VAAPIProfiles.probed {
            let offered = try entrypoints(for: profile, name: name)
            guard !offered.isEmpty else { continue }
            let probed = VAAPIProfiles.entrypoints.filter { offered.contains($0.0) }
            var formats: [PixelFormat] = []
            for (entrypoint, _) in probed {
                for format in surfaceFormats(profile, entrypoint) where !formats.contains(format) {
                    formats.append(format)
                }
            }
            result.append(
                VAAPIProfileInfo(codec: codec, profile: name, entrypoints: probed.map(\.1), pixelFormats: formats))
        }
        return result
    }

    /// The layouts CodecSessions moves through VA surfaces that the
    /// `RTFormat` attribute of `profile` × `entrypoint` offers:
    /// `VA_RT_FORMAT_YUV420` → NV12, `VA_RT_FORMAT_YUV420_10` → P010 (the
    /// layouts libavutil's VA-API frames map those render-target formats to);
    /// for HEVC Main422_10, `VA_RT_FORMAT_YUV422` → I422 and
    /// `VA_RT_FORMAT_YUV422_10` → I210, the planar formats the encoder
    /// uploads as YUY2 and Y210 (which no ``PixelFormat`` holds).
    /// Empty when the driver does not answer.
    package func surfaceFormats(_ profile: VAProfile, _ entrypoint: VAEntrypoint) -> [PixelFormat] {
        var attribute = VAConfigAttrib(type: VAConfigAttribRTFormat, value: 0)
        guard vaGetConfigAttributes(display, profile, entrypoint, &attribute, 1) == CVAAPI_STATUS_SUCCESS(),
            attribute.value != VA_ATTRIB_NOT_SUPPORTED
        else { return [] }
        let layouts: [(UInt32, PixelFormat)] =
            profile == VAProfileHEVCMain422_10
            ? [(UInt32(VA_RT_FORMAT_YUV422), .i422), (UInt32(VA_RT_FORMAT_YUV422_10), .i210)]
            : [(UInt32(VA_RT_FORMAT_YUV420), .nv12), (UInt32(VA_RT_FORMAT_YUV420_10), .p010)]
        return layouts.filter { attribute.value & $0.0 != 0 }.map(\.1)
    }
}

/// The VA profiles and entrypoints CodecSessions probes and uses.
package enum VAAPIProfiles {
    /// H.264 (ITU-T H.264 Annex A) Constrained Baseline, Main, High; HEVC
    /// (ITU-T H.265 Annex A) Main, Main 10 and Main 4:2:2 10, in table order.
    package static let probed: [(VAProfile, CodecType, String)] = [
        (VAProfileH264ConstrainedBaseline, .h264, "ConstrainedBaseline"),
        (VAProfileH264Main, .h264, "Main"),
        (VAProfileH264High, .h264, "High"),
        (VAProfileHEVCMain, .hevc, "Main"),
        (VAProfileHEVCMain10, .hevc, "Main10"),
        (VAProfileHEVCMain422_10, .hevc, "Main422_10"),
    ]

    package static let entrypoints: [(VAEntrypoint, String)] = [
        (VAEntrypointVLD, "VLD"),
        (VAEntrypointEncSlice, "EncSlice"),
        (VAEntrypointEncSliceLP, "EncSliceLP"),
    ]
}

extension VAAPIReport {
    /// Probes `explicitDevice`, or every device the device rule names.
    package static func probe(explicitDevice: String?) -> VAAPIReport {
        var report = VAAPIReport()
        let paths: [String]
        switch VAAPIDevices.candidates(explicitDevice) {
        case .success(let found): paths = found
        case .failure(let error):
            report.unavailableReason = error.message
            return report
        }
        for path in paths {
            var device = VAAPIDeviceInfo(path: path)
            do throws(MediaError) {
                let display = try VAAPIDisplay(path: path)
                device.vendor = display.vendor
                device.apiVersion = display.apiVersion
                device.profiles = try display.profiles()
            } catch {
                device.unavailableReason = error.message
            }
            report.devices.append(device)
        }
        if !report.isAvailable {
            report.unavailableReason = report.devices.map { "\($0.path): \($0.unavailableReason ?? "")" }
                .joined(separator: "; ")
        }
        return report
    }

    /// The libva version this build was compiled against (`VA_VERSION_S`).
    package static var compiledVersion: String { String(cString: CVAAPI_VERSION_S()) }
}
