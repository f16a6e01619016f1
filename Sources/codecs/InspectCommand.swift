import FormatConv
import Foundation

/// `codecs inspect IN [--json] [--nals] [--codec h264|hevc]`: what an Annex-B
/// elementary stream holds: access units and keyframes as the
/// ``AccessUnitAssembler`` finds them, one format description per format in
/// stream order (size, profile, level, chroma format, bit depth and the
/// parameter sets by index in hex) and, with `--nals`, every NAL unit.
///
/// IN is a file or `-` for standard input. The codec follows the extension
/// (`.h264 .264 .avc` / `.hevc .265 .h265`), else `--codec`, else it is
/// guessed from the NAL unit headers. Exit status: 0, 1 for unreadable or
/// malformed input, 2 for a usage error.
func runInspect(_ arguments: [String]) -> Int32 {
    let options: Arguments
    let codecChoice: String
    do {
        options = try Arguments(arguments, valueOptions: ["codec"], flagOptions: ["json", "nals", "help", "h"])
        codecChoice = try options.choice("codec", ["auto", "h264", "hevc"], default: "auto")
    } catch {
        printError("codecs inspect: \(error)")
        return 2
    }
    if options.flag("help") || options.flag("h") {
        print(
            """
            usage: codecs inspect IN [--json] [--nals] [--codec h264|hevc]

            Reports the access units, keyframes, format descriptions and parameter
            sets of an Annex-B H.264/HEVC stream (IN may be - for standard input).
              --json    machine-readable output
              --nals    list every NAL unit: offset of its start code, size
                        without the start code, type and name (HEVC: layer and
                        temporal id)
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
    let lowered = path.lowercased()
    if [".mp4", ".mkv", ".mov", ".ts", ".y4m"].contains(where: { lowered.hasSuffix($0) }) {
        printError("codecs inspect: \(path): only Annex-B elementary streams (.h264, .264, .hevc, .265) are read")
        return 1
    }
    let bytes: [UInt8]
    if path == "-" {
        bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
    } else {
        guard let data = FileManager.default.contents(atPath: path) else {
            printError("codecs inspect: cannot read \(path)")
            return 1
        }
        bytes = Array(data)
    }
    let codec: CodecType
    if codecChoice != "auto" {
        codec = codecChoice == "hevc" ? .hevc : .h264
    } else if [".h264", ".264", ".avc", ".jsv"].contains(where: { lowered.hasSuffix($0) }) {
        codec = .h264
    } else if [".hevc", ".265", ".h265"].contains(where: { lowered.hasSuffix($0) }) {
        codec = .hevc
    } else if let detected = AnnexB.detectCodec(in: bytes) {
        codec = detected
    } else {
        printError("codecs inspect: \(path): no NAL units found (is this an Annex-B stream?)")
        return 1
    }
    let report = InspectReport(bytes: bytes, codec: codec, listNALUnits: options.flag("nals"))
    print(options.flag("json") ? report.json.serialized() : report.text)
    return report.accessUnits == 0 && report.nalUnitCount == 0 ? 1 : 0
}

/// The facts `codecs inspect` prints.
struct InspectReport {
    struct NALUnit {
        var offset: Int
        var size: Int
        var type: Int
        var name: String
        var layerId: Int?
        var temporalId: Int?
    }

    var codec: CodecType
    var accessUnits = 0
    var keyframes = 0
    var descriptions: [FormatDescription] = []
    var dropped: [(reason: String, nalUnitCount: Int)] = []
    var nalUnitCount = 0
    var nalUnits: [NALUnit]?

    init(bytes: [UInt8], codec: CodecType, listNALUnits: Bool) {
        self.codec = codec
        var assembler = AccessUnitAssembler(codec: codec)
        for output in assembler.append(bytes) + assembler.finish() {
            switch output {
            case .sample(let sample):
                accessUnits += 1
                if sample.isKeyframe { keyframes += 1 }
                if descriptions.last != sample.formatDescription { descriptions.append(sample.formatDescription) }
            case .dropped(let reason, let count):
                dropped.append((reason, count))
            }
        }
        var units: [NALUnit] = []
        for location in AnnexB.nalUnits(in: bytes) {
            nalUnitCount += 1
            guard listNALUnits else { continue }
            let start = location.range.lowerBound
            var unit = NALUnit(offset: location.startCodeOffset, size: location.range.count, type: 0, name: "")
            switch codec {
            case .h264:
                let header = H264NALUnitHeader(bytes[start])
                unit.type = Int(header.type.rawValue)
                unit.name = header.type.name
            case .hevc:
                guard location.range.count >= 2 else {
                    unit.name = "truncated"
                    units.append(unit)
                    continue
                }
                let header = HEVCNALUnitHeader(bytes[start], bytes[start + 1])
                unit.type = Int(header.type.rawValue)
                unit.name = header.type.name
                unit.layerId = header.layerId
                unit.temporalId = header.temporalId
            }
            units.append(unit)
        }
        nalUnits = listNALUnits ? units : nil
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

    func parameterSetName(_ set: [UInt8]) -> String {
        guard let first = set.first else { return "empty" }
        switch codec {
        case .h264: return H264NALUnitType(rawValue: first).name
        case .hevc: return HEVCNALUnitType(rawValue: first >> 1).name
        }
    }

    var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("container", .string("annexb")),
            ("codec", .string(codec.rawValue)),
            ("accessUnits", .int(accessUnits)),
            ("keyframes", .int(keyframes)),
            (
                "descriptions",
                .array(
                    descriptions.map { d in
                        .object([
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
                                            ("type", .string(parameterSetName(set))),
                                            ("hex", .string(Self.hex(set))),
                                        ])
                                    })
                            ),
                        ])
                    })
            ),
            (
                "dropped",
                .array(
                    dropped.map {
                        .object([("reason", .string($0.reason)), ("nalUnits", .int($0.nalUnitCount))])
                    })
            ),
        ]
        if let nalUnits {
            members.append(
                (
                    "nalUnits",
                    .array(
                        nalUnits.map { unit in
                            var fields: [(String, JSONValue)] = [
                                ("offset", .int(unit.offset)), ("size", .int(unit.size)), ("type", .int(unit.type)),
                                ("name", .string(unit.name)),
                            ]
                            if let layer = unit.layerId { fields.append(("layerId", .int(layer))) }
                            if let temporal = unit.temporalId { fields.append(("temporalId", .int(temporal))) }
                            return .object(fields)
                        })
                ))
        }
        return .object(members)
    }

    var text: String {
        var lines = [
            "Annex-B \(codec == .h264 ? "H.264" : "HEVC") stream: \(nalUnitCount) NAL units, "
                + "\(accessUnits) access units, \(keyframes) keyframe\(keyframes == 1 ? "" : "s")"
        ]
        for (index, d) in descriptions.enumerated() {
            let tier = d.tier.map { $0 == 0 ? ", Main tier" : ", High tier" } ?? ""
            lines.append(
                "format \(index): \(d.width)x\(d.height) (coded \(d.codedWidth)x\(d.codedHeight)), profile "
                    + "\(d.profile), level \(d.level)\(tier), \(d.chromaFormat), \(d.bitDepth)-bit")
            for (setIndex, set) in d.parameterSets.enumerated() {
                lines.append("  [\(setIndex)] \(parameterSetName(set)) \(set.count) bytes: \(Self.hex(set))")
            }
        }
        for drop in dropped {
            lines.append("dropped \(drop.nalUnitCount) NAL unit(s): \(drop.reason)")
        }
        if let nalUnits {
            lines.append("NAL units (offset of start code, size without it):")
            for unit in nalUnits {
                var line = "  \(unit.offset)\t\(unit.size)\t\(unit.type)\t\(unit.name)"
                if let layer = unit.layerId, let temporal = unit.temporalId {
                    line += "\tlayer \(layer) temporal \(temporal)"
                }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }
}
