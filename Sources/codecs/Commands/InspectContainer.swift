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
        report = try ContainerInspectReport(path: path, listNALUnits: listNALUnits)
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

/// The facts `codecs inspect` prints for a container.
struct ContainerInspectReport {
    /// A NAL unit of a sample: `offset` is where its length prefix starts
    /// within the sample, `size` excludes the prefix.
    typealias NALUnit = InspectReport.NALUnit

    /// `"mp4"`, `"mov"`, `"mkv"` or `"ts"`.
    var container: String
    var codec: CodecType
    var track: Int
    var sampleEntry: String?
    var storedLengthSize: Int?
    var record: [UInt8]?
    var timescale: Int32
    var samples = 0
    var keyframeSamples: [Int] = []
    var startTime = MediaTime.invalid
    var endTime = MediaTime.invalid
    var descriptions: [FormatDescription] = []
    var nalUnits: [NALUnit]?
    /// Every track of the file and the packets read of each.
    var tracks: [MediaTrack] = []
    var packetCounts: [Int: Int] = [:]

    init(path: String, listNALUnits: Bool) throws(MediaError) {
        let reader = try MovieReader(path: path, readingEveryTrack: true)
        tracks = reader.tracks
        switch reader.container {
        case .mp4: container = ContainerFormat(path: path) == .quickTime ? "mov" : "mp4"
        case .quickTime: container = "mov"
        case .matroska: container = "mkv"
        case .mpegTS: container = "ts"
        }
        codec = reader.codec
        track = reader.trackIndex
        sampleEntry = reader.sampleEntryType
        storedLengthSize = reader.storedNALUnitLengthSize
        record = reader.storedRecord
        timescale = reader.timescale
        var units: [NALUnit] = []
        while let item = try reader.nextItem() {
            let sample: CompressedSample
            switch item {
            case .sample(let read): sample = read
            case .packet(let packet):
                packetCounts[packet.track, default: 0] += 1
                continue
            }
            packetCounts[track, default: 0] += 1
            if sample.isKeyframe { keyframeSamples.append(samples) }
            if descriptions.last != sample.formatDescription { descriptions.append(sample.formatDescription) }
            if sample.pts.isValid {
                if !startTime.isValid || sample.pts < startTime { startTime = sample.pts }
                let end = sample.duration.isValid ? sample.pts + sample.duration : sample.pts
                if !endTime.isValid || end > endTime { endTime = end }
            }
            if listNALUnits {
                units += try Self.nalUnits(of: sample, index: samples)
            }
            samples += 1
        }
        nalUnits = listNALUnits ? units : nil
    }

    /// The NAL units of `sample` with their headers decoded (H.264 7.3.1,
    /// H.265 7.3.1.2).
    private static func nalUnits(of sample: CompressedSample, index: Int) throws(MediaError) -> [NALUnit] {
        let codec = sample.formatDescription.codec
        let lengthSize = sample.formatDescription.nalUnitHeaderLength
        let bytes = sample.data
        let ranges: [Range<Int>]
        do {
            ranges = try LengthPrefixed.nalUnitRanges(in: bytes, lengthSize: lengthSize, codec: codec)
        } catch {
            throw MediaError(error.code, "sample \(index) (pts \(sample.pts)): \(error.message)")
        }
        // nalUnitRanges guarantees the 2-byte header for HEVC.
        return ranges.map { range in
            NALUnit(sample: index, offset: range.lowerBound - lengthSize, range: range, of: bytes, codec: codec)
        }
    }

    private var recordName: String { codec == .h264 ? "avcC" : "hvcC" }

    private var durationSeconds: Double? {
        guard startTime.isValid, endTime.isValid else { return nil }
        return (endTime - startTime).seconds
    }

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
