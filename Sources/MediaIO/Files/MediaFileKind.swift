import MediaCore

/// What a media file holds, told by its name's extension: the one table the
/// `codecs` tool's commands read.
///
/// | extension                            | kind                               |
/// |--------------------------------------|------------------------------------|
/// | `.h264 .264` (also `.avc .jsv`)      | Annex-B H.264 elementary stream    |
/// | `.hevc .265` (also `.h265`)          | Annex-B HEVC elementary stream     |
/// | `.mp4 .m4v .mov .mkv .ts .m2ts .mts` | container, as ``ContainerFormat`` names it |
/// | `.y4m`                               | raw video (YUV4MPEG2)              |
/// | `-`                                  | standard input or output; what it carries depends on the role (see ``init(path:standardStream:)``) |
///
/// Extensions are matched without regard to case. A name with none of these
/// extensions has no kind; the caller says what it does then.
public enum MediaFileKind: Equatable, Sendable {
    /// An Annex-B elementary stream; the codec is nil only for `-`.
    case annexB(CodecType?)
    /// A container file.
    case container(ContainerFormat)
    /// Raw video in YUV4MPEG2.
    case y4m

    /// The extensions the usage texts name for Annex-B streams.
    public static let annexBExtensions = [".h264", ".264", ".hevc", ".265"]
    /// The extensions the usage texts name for containers.
    public static let containerExtensions = [".mp4", ".m4v", ".mov", ".mkv", ".ts"]

    /// The kind `path`'s extension names, or `standardStream` for `-`
    /// (nil: `-` is not accepted in that role).
    public init?(path: String, standardStream: MediaFileKind? = .annexB(nil)) {
        if path == "-" {
            guard let standardStream else { return nil }
            self = standardStream
            return
        }
        if let container = ContainerFormat(path: path) {
            self = .container(container)
            return
        }
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        switch path[path.index(after: dot)...].lowercased() {
        case "h264", "264", "avc", "jsv": self = .annexB(.h264)
        case "hevc", "265", "h265": self = .annexB(.hevc)
        case "y4m": self = .y4m
        default: return nil
        }
    }

    /// The codec an Annex-B kind names; nil for other kinds and for `-`.
    public var annexBCodec: CodecType? {
        if case .annexB(let codec) = self { codec } else { nil }
    }

    /// The container, for a container kind.
    public var container: ContainerFormat? {
        if case .container(let container) = self { container } else { nil }
    }

    /// Whether the kind holds H.264/HEVC (Annex-B or a container), as
    /// opposed to raw video.
    public var holdsCompressedVideo: Bool { self != .y4m }
}
