import FormatConv
import MediaCore
import MediaIO

/// `codecs inspect IN [--json] [--nals] [--codec h264|hevc]`: what an Annex-B
/// elementary stream holds: access units and keyframes as the
/// ``AccessUnitAssembler`` finds them, one format description per format in
/// stream order (size, profile, level, chroma format, bit depth and the
/// parameter sets by index in hex) and, with `--nals`, every NAL unit.
///
/// IN is a file or `-` for standard input. The codec follows `--codec`, else
/// the extension (``MediaFileKind``), else it is guessed from the NAL unit
/// headers. Exit status: 0, 1 for unreadable or
/// malformed input, 2 for a usage error.
func runInspect(_ arguments: [String]) -> Int32 {
    let options: Arguments
    let codecChoice: CodecType?
    do {
        options = try Arguments(arguments, valueOptions: ["codec"], flagOptions: ["json", "nals", "help", "h"])
        codecChoice = try options.inputCodec()
    } catch {
        printError("codecs inspect: \(error)")
        return 2
    }
    if options.flag("help") || options.flag("h") {
        print(
            """
            usage: codecs inspect IN [--json] [--nals] [--codec h264|hevc]

            Reports the access units, keyframes, format descriptions and parameter
            sets of an Annex-B H.264/HEVC stream (IN may be - for standard input),
            or of the H.264/HEVC track of a .mp4, .m4v, .mov, .mkv or .ts file
            (also its avcC/hvcC record and which samples are keyframes), and lists
            every track of such a file: kind, codec, language, packets.
              --json    machine-readable output
              --nals    list every NAL unit: offset of its start code, size
                        without the start code, type and name (HEVC: layer and
                        temporal id); for a container, per sample: the offset
                        of its length prefix within the sample
              --codec   h264 or hevc when neither the extension nor the
                        headers tell
            """)
        return 0
    }
    guard options.positional.count == 1 else {
        printError(
            options.positional.isEmpty
                ? "codecs inspect: missing input (a .h264/.hevc file or -)"
                : "codecs inspect: unexpected argument '\(options.positional[1])'")
        return 2
    }
    let path = options.positional[0]
    let kind = MediaFileKind(path: path)
    if kind?.container != nil {
        return inspectContainer(path: path, json: options.flag("json"), listNALUnits: options.flag("nals"))
    }
    if kind == .y4m {
        printError("codecs inspect: \(path): raw Y4M video has no H.264/HEVC stream to inspect")
        return 1
    }
    let bytes: [UInt8]
    do throws(MediaError) {
        bytes = try FileByteSource(path: path).readAll()
    } catch {
        printError("codecs inspect: \(error.message)")
        return 1
    }
    guard !bytes.isEmpty else {
        printError("codecs inspect: \(path): the file is empty")
        return 1
    }
    guard let codec = codecChoice ?? kind?.annexBCodec ?? AnnexB.detectCodec(in: bytes) else {
        printError("codecs inspect: \(path): no NAL units found (is this an Annex-B stream?)")
        return 1
    }
    let report = InspectReport(bytes: bytes, codec: codec, listNALUnits: options.flag("nals"))
    guard report.nalUnitCount > 0 else {
        printError(
            "codecs inspect: \(path): the file holds no NAL unit (no Annex-B start code 00 00 01 in its "
                + "\(bytes.count) bytes; is it an Annex-B \(codec == .h264 ? "H.264" : "HEVC") stream?)")
        return 1
    }
    if options.flag("json") { report.printJSON() } else { report.printText() }
    return 0
}

/// What `codecs inspect` prints of an Annex-B stream: FormatConv's
/// ``AnnexBInspection`` as text or JSON.
struct InspectReport {
    typealias NALUnit = AnnexBInspection.NALUnit

    let inspection: AnnexBInspection
    /// Whether ``printText()`` and ``printJSON()`` list every NAL unit; the
    /// list is produced while it is printed, never held whole (a stream of
    /// millions of tiny NAL units stays within a few bytes per unit).
    let listsNALUnits: Bool

    var codec: CodecType { inspection.codec }
    var nalUnitCount: Int { inspection.nalUnitCount }

    init(bytes: [UInt8], codec: CodecType, listNALUnits: Bool) {
        inspection = AnnexBInspection(bytes: bytes, codec: codec)
        listsNALUnits = listNALUnits
    }

    private func forEachNALUnit(_ body: (NALUnit) -> Void) { inspection.forEachNALUnit(body) }

    /// Writes the report as text; with ``listsNALUnits`` one line per NAL unit.
    func printText() {
        print(text)
        guard listsNALUnits else { return }
        print("NAL units (offset of start code, size without it):")
        forEachNALUnit { print($0.textLine) }
    }

    /// Writes the report as JSON; with ``listsNALUnits`` the `nalUnits`
    /// array is written one unit at a time.
    func printJSON() {
        let head = json.serialized()
        guard listsNALUnits else {
            print(head)
            return
        }
        // `head` is an object ending in "\n}": reopen it for the last member.
        print(head.dropLast(2) + ",\n  \"nalUnits\": [", terminator: "")
        var first = true
        forEachNALUnit { unit in
            print((first ? "\n    " : ",\n    ") + unit.json.serialized(indent: 4), terminator: "")
            first = false
        }
        print(first ? "]\n}" : "\n  ]\n}")
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits: [Character] = Array("0123456789abcdef")
        var text = ""
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return text
    }

    var json: JSONValue {
        let members: [(String, JSONValue)] = [
            ("container", .string("annexb")),
            ("codec", .string(codec.rawValue)),
            ("accessUnits", .int(inspection.accessUnits)),
            ("keyframes", .int(inspection.keyframes)),
            ("descriptions", .array(inspection.descriptions.map { Self.json($0) })),
            (
                "dropped",
                .array(
                    inspection.dropped.entries.map {
                        .object([("reason", .string($0.reason)), ("nalUnits", .int($0.count))])
                    })
            ),
        ]
        return .object(members)
    }

    /// One entry of `descriptions`: the same shape for every kind of input.
    static func json(_ d: FormatDescription) -> JSONValue {
        .object([
            ("codecString", .string(d.codecString)),
            ("width", .int(d.width)), ("height", .int(d.height)),
            ("codedWidth", .int(d.codedWidth)), ("codedHeight", .int(d.codedHeight)),
            ("profile", .int(d.profile)), ("level", .int(d.level)),
            ("tier", d.tier.map { .int($0) } ?? .null),
            ("chromaFormat", .string(d.chromaFormat.description)),
            ("bitDepth", .int(d.bitDepth)), ("bitDepthChroma", .int(d.bitDepthChroma)),
            ("nalUnitHeaderLength", .int(d.nalUnitHeaderLength)),
            (
                "parameterSets",
                .array(
                    d.parameterSets.map { set in
                        .object([
                            ("type", .string(AnnexBInspection.parameterSetName(set, codec: d.codec))),
                            ("hex", .string(hex(set))),
                        ])
                    })
            ),
            ("warnings", .array(d.warnings.map { .string($0) })),
            ("hdr10", d.hdr10.map(json) ?? .null),
        ])
    }

    /// `hdr10` of a description: chromaticities and luminances (cd/m²) on
    /// the SEI's grid (steps of 0.00002 and 0.0001), light levels in cd/m².
    static func json(_ metadata: HDR10Metadata) -> JSONValue {
        func xy(_ c: HDR10Metadata.Chromaticity) -> JSONValue {
            .object([
                ("x", .double(Double(HDR10Metadata.chromaticityUnits(c.x)) / 50000)),
                ("y", .double(Double(HDR10Metadata.chromaticityUnits(c.y)) / 50000)),
            ])
        }
        func luminance(_ value: Double) -> JSONValue { .double(Double(HDR10Metadata.luminanceUnits(value)) / 10000) }
        let display: JSONValue =
            metadata.masteringDisplay.map { m in
                .object([
                    ("red", xy(m.red)), ("green", xy(m.green)), ("blue", xy(m.blue)), ("whitePoint", xy(m.whitePoint)),
                    ("maxLuminance", luminance(m.maxLuminance)), ("minLuminance", luminance(m.minLuminance)),
                ])
            } ?? .null
        let light: JSONValue =
            metadata.contentLightLevel.map { l in
                .object([("maxCLL", .int(l.maxContentLightLevel)), ("maxFALL", .int(l.maxFrameAverageLightLevel))])
            } ?? .null
        return .object([("masteringDisplay", display), ("contentLightLevel", light)])
    }

    /// The text lines for description number `index`.
    static func textLines(_ d: FormatDescription, index: Int) -> [String] {
        let tier = d.tier.map { $0 == 0 ? ", Main tier" : ", High tier" } ?? ""
        var lines = [
            "format \(index): \(d.width)x\(d.height) (coded \(d.codedWidth)x\(d.codedHeight)), profile "
                + "\(d.profile), level \(d.level)\(tier), \(d.chromaFormat), \(d.bitDepth)-bit",
            "  codec string: \(d.codecString)",
        ]
        for (setIndex, set) in d.parameterSets.enumerated() {
            lines.append(
                "  [\(setIndex)] \(AnnexBInspection.parameterSetName(set, codec: d.codec)) \(set.count) bytes: \(hex(set))"
            )
        }
        for warning in d.warnings { lines.append("  warning: \(warning)") }
        if let display = d.hdr10?.masteringDisplay {
            func xy(_ c: HDR10Metadata.Chromaticity) -> String { "(\(c.x), \(c.y))" }
            lines.append(
                "  HDR10 mastering display: R\(xy(display.red)) G\(xy(display.green)) B\(xy(display.blue)) "
                    + "WP\(xy(display.whitePoint)), luminance \(display.minLuminance)–\(display.maxLuminance) cd/m²")
        }
        if let light = d.hdr10?.contentLightLevel {
            lines.append(
                "  HDR10 content light level: MaxCLL \(light.maxContentLightLevel) cd/m², "
                    + "MaxFALL \(light.maxFrameAverageLightLevel) cd/m²")
        }
        return lines
    }

    var text: String {
        let (accessUnits, keyframes) = (inspection.accessUnits, inspection.keyframes)
        var lines = [
            "Annex-B \(codec == .h264 ? "H.264" : "HEVC") stream: \(nalUnitCount) NAL units, "
                + "\(accessUnits) access units, \(keyframes) keyframe\(keyframes == 1 ? "" : "s")"
        ]
        for (index, d) in inspection.descriptions.enumerated() {
            lines += Self.textLines(d, index: index)
        }
        for drop in inspection.dropped.entries {
            lines.append("dropped \(drop.count) NAL unit(s): \(drop.reason)")
        }
        return lines.joined(separator: "\n")
    }
}

extension AnnexBInspection.NALUnit {
    var json: JSONValue {
        var fields: [(String, JSONValue)] = sample.map { [("sample", .int($0))] } ?? []
        fields += [("offset", .int(offset)), ("size", .int(size)), ("type", .int(type)), ("name", .string(name))]
        if let layerId { fields.append(("layerId", .int(layerId))) }
        if let temporalId { fields.append(("temporalId", .int(temporalId))) }
        return .object(fields)
    }

    /// Tab-separated: [sample,] offset, size, type, name[, layer and temporal id].
    var textLine: String {
        var line = "  " + (sample.map { "\($0)\t" } ?? "") + "\(offset)\t\(size)\t\(type)\t\(name)"
        if let layerId, let temporalId { line += "\tlayer \(layerId) temporal \(temporalId)" }
        return line
    }
}
