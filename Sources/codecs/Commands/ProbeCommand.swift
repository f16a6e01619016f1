import DecodeSession
import EncodeSession
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// `codecs probe [--json] [--device PATH]`: the libraries this build uses,
/// which encoders and decoders work on this machine, and what VA-API offers
/// (or exactly why it cannot be used). Exits 0 whether or not hardware is
/// present; 2 on a usage error. The JSON keys are documented in the README.
func runProbe(_ arguments: [String]) -> Int32 {
    let options: Arguments
    do {
        options = try Arguments(arguments, valueOptions: ["device"], flagOptions: ["json", "help", "h"])
    } catch {
        printError("codecs probe: \(error)")
        return 2
    }
    if options.flag("help") || options.flag("h") {
        print(
            """
            usage: codecs probe [--json] [--device PATH]

            Lists library versions, usable encoders and decoders, and each VA-API
            device's profiles, entrypoints and surface formats, or why VA-API is
            unavailable.
              --json         machine-readable output (keys documented in the README)
              --device PATH  probe this VA-API device only (also CODECS_VAAPI_DEVICE)
            """)
        return 0
    }
    guard options.positional.isEmpty else {
        printError("codecs probe: unexpected argument '\(options.positional[0])'")
        return 2
    }
    let device = options.value("device") ?? environmentValue("CODECS_VAAPI_DEVICE")
    let report = ProbeReport.gather(vaapiDevice: device)
    print(options.flag("json") ? report.json.serialized() : report.text)
    return 0
}

private func environmentValue(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    let text = String(cString: value)
    return text.isEmpty ? nil : text
}

/// One encoder or decoder line of the report.
private struct CodecEntry {
    var info: CodecBackendInfo
    var properties: [EncoderPropertyInfo]?

    var kind: String { info.isHardware ? "hardware" : "software" }

    var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("name", .string(info.name)), ("codec", .string(info.codec.rawValue)), ("kind", .string(kind)),
            ("available", .bool(info.isAvailable)), ("reason", .optional(info.unavailableReason)),
        ]
        if info.usesLowPowerEntrypoint { members.append(("lowPower", .bool(true))) }
        members.append(("pixelFormats", .array(info.pixelFormats.map { .string($0.rawValue) })))
        if let properties {
            members.append(("properties", .array(properties.map(Self.json))))
        }
        return .object(members)
    }

    static func json(_ property: EncoderPropertyInfo) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("name", .string(property.name)), ("type", .string(property.type.rawValue)),
            ("settable", .bool(property.isSettable)),
            ("settableWhileEncoding", .bool(property.isSettableWhileEncoding)),
        ]
        if let minimum = property.minimum { members.append(("minimum", .double(minimum))) }
        if let maximum = property.maximum { members.append(("maximum", .double(maximum))) }
        if let allowed = property.allowedValues {
            members.append(("allowedValues", .array(allowed.map { .string($0) })))
        }
        return .object(members)
    }
}

/// What `codecs probe` prints: the library's capability API, as is.
private struct ProbeReport {
    var libraries: LibraryVersions
    var encoders: [CodecEntry]
    var decoders: [CodecEntry]
    var vaapi: VAAPIReport

    static func gather(vaapiDevice: String?) -> ProbeReport {
        let vaapi = CompressionSession.vaapiDevices(explicitDevice: vaapiDevice)
        return ProbeReport(
            libraries: CompressionSession.libraryVersions(vaapi: vaapi),
            encoders: CompressionSession.encoders(vaapiDevice: vaapiDevice).map {
                CodecEntry(
                    info: $0, properties: CompressionSession.supportedProperties(forEncoder: $0.name, codec: $0.codec))
            },
            decoders: DecompressionSession.decoders(vaapiDevice: vaapiDevice).map { CodecEntry(info: $0) },
            vaapi: vaapi)
    }

    var json: JSONValue {
        let devices: [JSONValue] = vaapi.devices.map { device in
            var members: [(String, JSONValue)] = [
                ("path", .string(device.path)), ("vendor", .optional(device.vendor)),
                ("apiVersion", .optional(device.apiVersion)),
                (
                    "profiles",
                    .array(
                        device.profiles.map { profile in
                            .object([
                                ("codec", .string(profile.codec.rawValue)), ("profile", .string(profile.profile)),
                                ("entrypoints", .array(profile.entrypoints.map { .string($0) })),
                                ("pixelFormats", .array(profile.pixelFormats.map { .string($0.rawValue) })),
                            ])
                        })
                ),
            ]
            members.append(("error", .optional(device.unavailableReason)))
            return .object(members)
        }
        return .object([
            ("libraries", .object(libraries.versions.map { ($0.library, .string($0.version)) })),
            ("libraryBuilds", .object(libraries.builds.map { ($0.library, .string($0.version)) })),
            ("encoders", .array(encoders.map(\.json))),
            ("decoders", .array(decoders.map(\.json))),
            (
                "vaapi",
                .object([
                    ("available", .bool(vaapi.isAvailable)), ("reason", .optional(vaapi.unavailableReason)),
                    ("devices", .array(devices)),
                ])
            ),
        ])
    }

    var text: String {
        func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
        }
        var lines = ["libraries"]
        for entry in libraries.versions { lines.append("  " + pad(entry.library, 13) + entry.version) }
        for (title, entries) in [("encoders", encoders), ("decoders", decoders)] {
            lines.append(title)
            for entry in entries {
                let state = entry.info.unavailableReason.map { "unavailable: \($0)" } ?? "available"
                lines.append(
                    "  " + pad(entry.info.name, 12) + pad(entry.info.codec.rawValue, 6) + pad(entry.kind, 10) + state
                        + (entry.info.usesLowPowerEntrypoint ? " (low-power entrypoint)" : ""))
                lines.append(
                    "  " + pad("", 28) + (title == "encoders" ? "codes " : "gives ")
                        + entry.info.pixelFormats.map(\.rawValue).joined(separator: " "))
            }
        }
        lines.append("VA-API: " + (vaapi.isAvailable ? "available" : "unavailable: \(vaapi.unavailableReason ?? "")"))
        for device in vaapi.devices {
            let vendor = device.vendor.map { " — \($0)" } ?? ""
            lines.append("  \(device.path)\(vendor)\(device.unavailableReason.map { ": \($0)" } ?? "")")
            for profile in device.profiles {
                lines.append(
                    "    " + pad(profile.codec.rawValue, 6) + pad(profile.profile, 21)
                        + pad(profile.entrypoints.joined(separator: " "), 20)
                        + profile.pixelFormats.map { $0.rawValue.uppercased() }.joined(separator: " "))
            }
        }
        return lines.joined(separator: "\n")
    }
}
