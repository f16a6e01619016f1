import FormatConv
import MediaCore
import MediaIO

/// `codecs inspect IN.mp4|.m4v|.mov|.mkv|.ts`: the H.264/HEVC track of a
/// container as ``MovieReader`` reads it: the container and codec, the
/// track's stored configuration record (`avcC`/`hvcC`, in hex), every track
/// of the file (kind, codec, time base, language, packets read), one format
/// description per format in decode order (the same JSON shape as for
/// Annex-B input), the sample and keyframe counts and, with `--nals`, the NAL
/// units of every sample.
///
/// Sample bytes are MovieReader's: length-prefixed, without parameter sets;
/// MPEG-TS samples are converted from Annex-B (their access unit delimiters
/// and parameter sets are gone) and a legacy 3-byte length size is read as 4.
/// Exit status 0, or 1 when the file cannot be read (the message says why).
func inspectContainer(path: String, json: Bool, listNALUnits: Bool) -> Int32 {
    let report: ContainerInspectReport
    do throws(MediaError) {
        report = try ContainerInspectReport(path: path, listingNALUnits: listNALUnits)
    } catch {
        // A file without H.264/HEVC video (audio only): its tracks still tell what it is.
        if error.code == .unsupported, let tracks = try? MovieReader.tracks(inFile: path), !tracks.isEmpty {
            print(tracks.map(\.description).joined(separator: "\n"))
        }
        printError("codecs inspect: \(error.message)")
        return 1
    }
    print(json ? report.json.serialized() : report.text)
    return 0
}

/// What `codecs inspect` prints of a container: MediaIO's
/// ``ContainerInspection`` as text or JSON.
typealias ContainerInspectReport = ContainerInspection

extension ContainerInspection {
    private var recordName: String { codec == .h264 ? "avcC" : "hvcC" }

    var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("container", .string(container)),
            ("codec", .string(codec.rawValue)),
            ("track", .int(track)),
            ("sampleEntry", .optional(sampleEntry)),
            ("accessUnits", .int(samples)),
            ("keyframes", .int(keyframeSamples.count)),
            ("keyframeSamples", .array(keyframeSamples.map { .int($0) })),
            ("timescale", .int(Int(timescale))),
            ("startTime", startTime.isValid ? .double(startTime.seconds) : .null),
            ("duration", durationSeconds.map { .double($0) } ?? .null),
            (
                "record",
                record.map { bytes in
                    .object([
                        ("type", .string(recordName)),
                        ("size", .int(bytes.count)),
                        ("nalUnitLengthSize", storedLengthSize.map { .int($0) } ?? .null),
                        ("hex", .string(InspectReport.hex(bytes))),
                    ])
                } ?? .null
            ),
            ("descriptions", .array(descriptions.map { InspectReport.json($0) })),
            ("tracks", .array(tracks.map { trackJSON($0) })),
        ]
        if let nalUnits {
            members.append(("nalUnits", .array(nalUnits.map(\.json))))
        }
        return .object(members)
    }

    /// One entry of the `tracks` array.
    private func trackJSON(_ track: MediaTrack) -> JSONValue {
        .object([
            ("index", .int(track.index)),
            ("kind", .string(track.kind.rawValue)),
            ("codec", .string(track.codecName)),
            ("codecTag", .optional(track.codecTag)),
            ("timeBase", .string("\(track.timeBase.value)/\(track.timeBase.timescale)")),
            ("duration", track.duration.isValid ? .double(track.duration.seconds) : .null),
            ("language", .optional(track.language)),
            ("sampleRate", track.sampleRate.map { .int($0) } ?? .null),
            ("channels", track.channelCount.map { .int($0) } ?? .null),
            ("width", track.width.map { .int($0) } ?? .null),
            ("height", track.height.map { .int($0) } ?? .null),
            ("packets", .int(packetCounts[track.index] ?? 0)),
            ("codecConfiguration", .string(InspectReport.hex(track.codecConfiguration))),
        ])
    }

    var text: String {
        let codecName = codec == .h264 ? "H.264" : "HEVC"
        let entry = sampleEntry.map { " (\($0))" } ?? ""
        var lines = [
            "\(container) \(codecName) track \(track)\(entry): \(samples) samples, \(keyframeSamples.count) "
                + "keyframe\(keyframeSamples.count == 1 ? "" : "s"), timescale \(timescale)"
                + (durationSeconds.map { ", \($0) s" } ?? "")
        ]
        if let record {
            let lengths = storedLengthSize.map { ", NAL length size \($0)" } ?? ""
            lines.append("\(recordName) \(record.count) bytes\(lengths): \(InspectReport.hex(record))")
        } else {
            lines.append("no configuration record: the samples carry Annex-B with in-band parameter sets")
        }
        for (index, description) in descriptions.enumerated() {
            lines += InspectReport.textLines(description, index: index)
        }
        if !keyframeSamples.isEmpty {
            lines.append("keyframe samples: " + keyframeSamples.map(String.init).joined(separator: " "))
        }
        lines.append("tracks:")
        for other in tracks {
            let count = packetCounts[other.index] ?? 0
            lines.append("  \(other), \(count) packet\(count == 1 ? "" : "s")")
        }
        if let nalUnits {
            lines.append("NAL units (sample, offset of the length prefix in the sample, size without it):")
            lines += nalUnits.map(\.textLine)
        }
        return lines.joined(separator: "\n")
    }
}
