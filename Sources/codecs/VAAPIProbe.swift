import CVAAPI
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// What `codecs probe` found out about VA-API: each device tried, with its
/// vendor and its profile × entrypoint table for H.264 and HEVC, or the
/// exact reason it could not be used.
///
/// libva picks its driver itself and honours `LIBVA_DRIVER_NAME` and
/// `LIBVA_DRIVERS_PATH`; the device is a DRM render node
/// (`/dev/dri/renderD*`) unless one is named explicitly (`--device` or
/// `CODECS_VAAPI_DEVICE`).
struct VAAPIReport {
    struct Profile {
        var codec: CodecType
        /// The profile's name without its codec (`"High"`, `"Main10"`).
        var profile: String
        /// `"VLD"` (decode), `"EncSlice"`, `"EncSliceLP"` (encode).
        var entrypoints: [String]
    }

    struct Device {
        var path: String
        var vendor: String?
        /// The VA-API version the driver speaks (`vaInitialize`'s major.minor).
        var apiVersion: String?
        var profiles: [Profile] = []
        /// Why the device could not be used; nil when it answered.
        var error: String?
    }

    var devices: [Device] = []
    /// Why no device could be used (nil when at least one answered).
    var unavailableReason: String?

    var available: Bool { devices.contains { $0.error == nil } }

    /// Whether a usable device offers `entrypoint` for any profile of `codec`.
    func supports(_ codec: CodecType, anyOf entrypoints: Set<String>) -> Bool {
        devices.contains { device in
            device.error == nil
                && device.profiles.contains { $0.codec == codec && !entrypoints.isDisjoint(with: $0.entrypoints) }
        }
    }
}

/// The profiles `codecs probe` reports, in table order: H.264 (ITU-T H.264
/// Annex A) Constrained Baseline, Main, High; HEVC (ITU-T H.265 Annex A)
/// Main and Main 10.
private let probedProfiles: [(VAProfile, CodecType, String)] = [
    (VAProfileH264ConstrainedBaseline, .h264, "ConstrainedBaseline"),
    (VAProfileH264Main, .h264, "Main"),
    (VAProfileH264High, .h264, "High"),
    (VAProfileHEVCMain, .hevc, "Main"),
    (VAProfileHEVCMain10, .hevc, "Main10"),
]

private let probedEntrypoints: [(VAEntrypoint, String)] = [
    (VAEntrypointVLD, "VLD"),
    (VAEntrypointEncSlice, "EncSlice"),
    (VAEntrypointEncSliceLP, "EncSliceLP"),
]

/// The one place libva status codes become ``MediaError``s: success passes,
/// anything else is a backend failure carrying `vaErrorStr`.
private func vaCheck(_ status: VAStatus, _ call: String) throws(MediaError) {
    guard status != CVAAPI_STATUS_SUCCESS() else { return }
    throw .backendFailure("\(call) failed: \(String(cString: vaErrorStr(status))) (VAStatus \(status))")
}

/// Collects the messages libva would print to standard error, so that a
/// failed driver load can be explained in the probe's reason.
private final class LibvaMessages {
    var lines: [String] = []
}

private let libvaMessageCallback: VAMessageCallback = { context, message in
    guard let context, let message else { return }
    let sink = Unmanaged<LibvaMessages>.fromOpaque(context).takeUnretainedValue()
    var text = String(cString: message)
    while text.last == "\n" { text.removeLast() }
    sink.lines.append(text)
}

/// One opened DRM device and its initialized VA display; closes both.
private final class VADisplayHandle {
    let display: VADisplay
    private let descriptor: Int32
    private let messages: LibvaMessages
    private var initialized = false

    /// Opens `path` and initializes libva on it.
    init(path: String) throws(MediaError) {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw MediaError(.system, "cannot open \(path): \(String(cString: strerror(code)))")
        }
        guard let display = vaGetDisplayDRM(fd) else {
            close(fd)
            throw .unavailable("vaGetDisplayDRM(\(path)) returned no display (not a DRM device?)")
        }
        self.descriptor = fd
        self.display = display
        self.messages = LibvaMessages()
        let context = Unmanaged.passUnretained(messages).toOpaque()
        _ = vaSetErrorCallback(display, libvaMessageCallback, context)
        _ = vaSetInfoCallback(display, libvaMessageCallback, context)
        LiveObjects.increment(.vaDisplay)
        var major: Int32 = 0
        var minor: Int32 = 0
        let status = vaInitialize(display, &major, &minor)
        do throws(MediaError) {
            try vaCheck(status, "vaInitialize")
        } catch {
            throw MediaError(.unavailable, "\(error.message); \(driverDescription)")
        }
        initialized = true
        apiVersion = "\(major).\(minor)"
    }

    private(set) var apiVersion = ""

    /// Which driver libva tried, from `LIBVA_DRIVER_NAME` or its own messages.
    private var driverDescription: String {
        var parts: [String] = []
        if let name = getenv("LIBVA_DRIVER_NAME") {
            parts.append("LIBVA_DRIVER_NAME=\(String(cString: name))")
        }
        if let path = getenv("LIBVA_DRIVERS_PATH") {
            parts.append("LIBVA_DRIVERS_PATH=\(String(cString: path))")
        }
        let tried = messages.lines.compactMap { line -> String? in
            guard let range = line.firstRange(of: "Trying to open ") else { return nil }
            return String(line[range.upperBound...])
        }
        if !tried.isEmpty { parts.append("driver tried: \(tried.joined(separator: ", "))") }
        let errors = messages.lines.filter { !$0.contains("Trying to open") && !$0.contains("VA-API version") }
        if !errors.isEmpty { parts.append("libva said: \(errors.joined(separator: "; "))") }
        return parts.isEmpty ? "no driver found for this device" : parts.joined(separator: "; ")
    }

    deinit {
        if initialized { _ = vaTerminate(display) }
        close(descriptor)
        LiveObjects.decrement(.vaDisplay)
    }

    var vendor: String? {
        guard let text = vaQueryVendorString(display) else { return nil }
        return String(cString: text)
    }

    /// The probed profiles the driver offers, each with its probed entrypoints.
    func profiles() throws(MediaError) -> [VAAPIReport.Profile] {
        let maxProfiles = Int(vaMaxNumProfiles(display))
        var offered = [VAProfile](repeating: VAProfileNone, count: max(1, maxProfiles))
        var profileCount: Int32 = 0
        try vaCheck(vaQueryConfigProfiles(display, &offered, &profileCount), "vaQueryConfigProfiles")
        let offeredSet = Set(offered.prefix(Int(profileCount)).map(\.rawValue))

        let maxEntrypoints = Int(vaMaxNumEntrypoints(display))
        var result: [VAAPIReport.Profile] = []
        for (profile, codec, name) in probedProfiles where offeredSet.contains(profile.rawValue) {
            var entrypoints = [VAEntrypoint](repeating: VAEntrypoint(rawValue: 0), count: max(1, maxEntrypoints))
            var count: Int32 = 0
            try vaCheck(
                vaQueryConfigEntrypoints(display, profile, &entrypoints, &count), "vaQueryConfigEntrypoints(\(name))")
            let present = Set(entrypoints.prefix(Int(count)).map(\.rawValue))
            let names = probedEntrypoints.filter { present.contains($0.0.rawValue) }.map(\.1)
            result.append(VAAPIReport.Profile(codec: codec, profile: name, entrypoints: names))
        }
        return result
    }
}

/// The render nodes under `/dev/dri`, sorted; or why there are none.
private func renderNodes() -> Result<[String], MediaError> {
    guard let directory = opendir("/dev/dri") else {
        let code = errno
        return .failure(
            .unavailable("no VA-API render node: cannot list /dev/dri: \(String(cString: strerror(code)))"))
    }
    defer { closedir(directory) }
    var nodes: [String] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name.hasPrefix("renderD") { nodes.append("/dev/dri/" + name) }
    }
    guard !nodes.isEmpty else {
        return .failure(.unavailable("no VA-API render node: /dev/dri has no renderD* device"))
    }
    return .success(nodes.sorted())
}

/// Probes VA-API on `explicitDevice`, or on every render node when nil.
func probeVAAPI(explicitDevice: String?) -> VAAPIReport {
    var report = VAAPIReport()
    let paths: [String]
    if let explicitDevice {
        paths = [explicitDevice]
    } else {
        switch renderNodes() {
        case .success(let nodes): paths = nodes
        case .failure(let error):
            report.unavailableReason = error.message
            return report
        }
    }
    for path in paths {
        var device = VAAPIReport.Device(path: path)
        do throws(MediaError) {
            let handle = try VADisplayHandle(path: path)
            device.vendor = handle.vendor
            device.apiVersion = handle.apiVersion
            device.profiles = try handle.profiles()
        } catch {
            device.error = error.message
        }
        report.devices.append(device)
    }
    if !report.available {
        report.unavailableReason = report.devices.map { "\($0.path): \($0.error ?? "")" }.joined(separator: "; ")
    }
    return report
}

/// The libva version this tool was built against (`VA_VERSION_S`).
var libvaCompileTimeVersion: String { String(cString: CVAAPI_VERSION_S()) }
