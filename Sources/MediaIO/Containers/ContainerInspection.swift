// What the H.264/HEVC track of a container file holds, as values.

import FormatConv
import MediaCore

/// The H.264/HEVC track of a container file as ``MovieReader`` reads it, as
/// values an app can print or check: the container and codec, the track's
/// stored configuration record (`avcC`/`hvcC`), every track of the file
/// with the packets read of each, one `FormatDescription` per format in
/// decode order, the sample and keyframe counts, the presentation span and,
/// when asked, the NAL units of every sample.
///
/// ```swift
/// let inspection = try ContainerInspection(path: "clip.mp4")
/// print(inspection.samples, inspection.keyframeSamples.count, inspection.tracks.count)
/// ```
///
/// Sample bytes are MovieReader's: length-prefixed, without parameter sets;
/// MPEG-TS samples are converted from Annex-B (their access unit delimiters
/// and parameter sets are gone) and a legacy 3-byte length size is read as
/// 4. The whole file is read; with `listingNALUnits` every NAL unit is kept.
public struct ContainerInspection: Sendable {
    /// A NAL unit of a sample: `offset` is where its length prefix starts
    /// within the sample, `size` excludes the prefix.
    public typealias NALUnit = AnnexBInspection.NALUnit

    /// `"mp4"`, `"mov"`, `"mkv"` or `"ts"`.
    public let container: String
    /// The video track's codec.
    public let codec: CodecType
    /// The video track's index among ``tracks``.
    public let track: Int
    /// The sample entry (`avc1`, `hvc1`, `hev1` …), when the container has one.
    public let sampleEntry: String?
    /// The NAL unit length size the record states.
    public let storedLengthSize: Int?
    /// The stored configuration record (`avcC`/`hvcC`), if any.
    public let record: [UInt8]?
    /// The video track's timescale.
    public let timescale: Int32
    /// Video samples read.
    public private(set) var samples = 0
    /// The numbers of the samples that are keyframes, in decode order.
    public private(set) var keyframeSamples: [Int] = []
    /// The earliest presentation time, if any sample has one.
    public private(set) var startTime = MediaTime.invalid
    /// The latest presentation time plus its sample's duration.
    public private(set) var endTime = MediaTime.invalid
    /// One description per format, in decode order.
    public private(set) var descriptions: [FormatDescription] = []
    /// Every NAL unit of every sample, with `listingNALUnits`; else nil.
    public private(set) var nalUnits: [NALUnit]?
    /// Every track of the file.
    public private(set) var tracks: [MediaTrack] = []
    /// The packets read of each track, by track index.
    public private(set) var packetCounts: [Int: Int] = [:]

    /// The span from ``startTime`` to ``endTime`` in seconds, if both are known.
    public var durationSeconds: Double? {
        guard startTime.isValid, endTime.isValid else { return nil }
        return (endTime - startTime).seconds
    }

    /// Reads the file at `path` whole.
    /// - Throws: the reader's error (`.unsupported` for a file without
    ///   H.264/HEVC video), or a sample whose length prefixes are malformed.
    public init(path: String, listingNALUnits: Bool = false) throws(MediaError) {
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
            if listingNALUnits {
                units += try Self.nalUnits(of: sample, index: samples)
            }
            samples += 1
        }
        nalUnits = listingNALUnits ? units : nil
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
}
