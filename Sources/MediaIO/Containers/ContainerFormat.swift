import MediaCore

/// The container formats MediaIO reads and writes through libavformat.
///
/// The length-prefixed world (AVCC/HVCC samples with an `avcC`/`hvcC` record)
/// lives in MP4, QuickTime and Matroska; the Annex-B world lives in MPEG-TS.
public enum ContainerFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    /// ISO base media file format (ISO/IEC 14496-12/-14/-15): `.mp4`, `.m4v`.
    case mp4
    /// QuickTime movie: `.mov`. Same sample model as MP4.
    case quickTime
    /// Matroska: `.mkv`. Samples keep their length prefixes; CodecPrivate is the record.
    case matroska
    /// MPEG-2 transport stream (ISO/IEC 13818-1): `.ts`. Samples are Annex-B.
    case mpegTS

    /// The format that a file name's extension names, or nil when it names none
    /// of these (`.h264`, `.y4m`, ...).
    public init?(path: String) {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        switch path[path.index(after: dot)...].lowercased() {
        case "mp4", "m4v": self = .mp4
        case "mov": self = .quickTime
        case "mkv": self = .matroska
        case "ts", "m2ts", "mts": self = .mpegTS
        default: return nil
        }
    }

    /// Whether samples are stored with length prefixes and a configuration
    /// record (true) or as Annex-B byte streams (false).
    public var storesLengthPrefixedSamples: Bool { self != .mpegTS }

    /// The libavformat muxer name.
    var muxerName: String {
        switch self {
        case .mp4: return "mp4"
        case .quickTime: return "mov"
        case .matroska: return "matroska"
        case .mpegTS: return "mpegts"
        }
    }

    /// The container behind a libavformat demuxer name such as
    /// `"mov,mp4,m4a,3gp,3g2,mj2"`, or nil when MediaIO does not read it.
    init?(demuxerName: String) {
        let names = demuxerName.split(separator: ",")
        if names.contains("mp4") || names.contains("mov") {
            self = .mp4
        } else if names.contains("matroska") {
            self = .matroska
        } else if names.contains("mpegts") {
            self = .mpegTS
        } else {
            return nil
        }
    }

    /// The container's usual name: `"MP4"`, `"QuickTime"`, `"Matroska"` or `"MPEG-TS"`.
    public var description: String {
        switch self {
        case .mp4: return "MP4"
        case .quickTime: return "QuickTime"
        case .matroska: return "Matroska"
        case .mpegTS: return "MPEG-TS"
        }
    }
}
