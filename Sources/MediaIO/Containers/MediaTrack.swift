import FormatConv
import MediaCore
import NativeCodecs

/// What a track of a movie file holds.
public enum MediaTrackKind: String, Sendable, CaseIterable, CustomStringConvertible {
    case video
    case audio
    case subtitle
    /// Timed metadata or other data (QuickTime timecode, MPEG-TS KLV or ID3).
    case data
    /// A file attached to a Matroska movie (a font, a cover).
    case attachment
    /// A track libavformat cannot classify.
    case unknown

    /// The raw value, such as `"video"` or `"subtitle"`.
    public var description: String { rawValue }
}

/// One track of a movie file as ``MovieReader`` found it: its kind, codec,
/// time base, language and codec configuration.
///
/// A track other than the H.264/HEVC video track that ``MovieReader`` turns
/// into samples is carried as opaque ``TrackPacket``s: ``MovieWriter`` copies
/// it into another container with the same codec parameters
/// (``MovieWriter/addTrack(copying:)``), without decoding it.
public struct MediaTrack: Sendable, CustomStringConvertible {
    /// The track's index among the file's tracks.
    public let index: Int
    /// What the track holds: video, audio, subtitles, data or an attachment.
    public let kind: MediaTrackKind
    /// libavcodec's name for the codec: `"h264"`, `"aac"`, `"opus"`,
    /// `"mp3"`, `"mov_text"`, `"subrip"`; `"none"` when libavcodec knows no
    /// codec for it (a QuickTime timecode track).
    public let codecName: String
    /// One tick of the track's timestamps (`1/48000` s for 48 kHz audio).
    public let timeBase: MediaTime
    /// The track's duration as the container states it, or `.invalid`.
    public let duration: MediaTime
    /// The ISO 639-2 language code (`"eng"`), nil when none is named or it is `und`.
    public let language: String?
    /// The codec's configuration (libavformat's `extradata`): an AAC
    /// AudioSpecificConfig, an Opus `OpusHead`, an `avcC` record; empty when
    /// the codec has none.
    public let codecConfiguration: [UInt8]
    /// Audio: samples per second and channels; nil for other kinds.
    public let sampleRate: Int?
    /// Audio: the number of channels; nil for other kinds.
    public let channelCount: Int?
    /// Audio: samples per frame when the codec's frames have a fixed size
    /// (1024 for AAC, 1152 for MP3 layer III), nil otherwise.
    public let samplesPerFrame: Int?
    /// Video: the coded picture size; nil for other kinds.
    public let width: Int?
    /// Video: the coded picture height in pixels; nil for other kinds.
    public let height: Int?
    /// A cover image stored as a video track of one picture.
    public let isAttachedPicture: Bool
    /// The container's four-character code for the codec (an MP4 sample
    /// entry type such as `mp4a`, `tmcd`), nil when it has none.
    public let codecTag: String?

    /// The source's codec parameters, for stream copy.
    package let parameters: CodecParameters
    package let disposition: Int32

    init(_ stream: DemuxedStream) {
        index = stream.index
        kind =
            switch stream.mediaType {
            case "video": .video
            case "audio": .audio
            case "subtitle": .subtitle
            case "data": .data
            case "attachment": .attachment
            default: .unknown
            }
        codecName = stream.codecName
        timeBase = MediaTime(value: Int64(stream.timeBaseNumerator), timescale: stream.timeBaseDenominator)
        duration =
            stream.duration.map {
                MediaTime(value: $0 &* Int64(stream.timeBaseNumerator), timescale: stream.timeBaseDenominator)
            }
            ?? .invalid
        language = stream.language
        codecConfiguration = stream.extradata
        sampleRate = stream.sampleRate > 0 ? stream.sampleRate : nil
        channelCount = stream.channelCount > 0 ? stream.channelCount : nil
        samplesPerFrame = stream.frameSize > 0 ? stream.frameSize : nil
        width = stream.width > 0 ? stream.width : nil
        height = stream.height > 0 ? stream.height : nil
        isAttachedPicture = stream.isAttachedPicture
        let tagBytes = (0..<4).map { UInt8(truncatingIfNeeded: stream.codecTag >> (8 * $0)) }
        codecTag =
            stream.codecTag != 0 && tagBytes.allSatisfy({ (0x20...0x7E).contains($0) })
            ? String(decoding: tagBytes, as: UTF8.self) : nil
        parameters = stream.parameters
        disposition = stream.disposition
    }

    /// `"track 1: audio aac 48000 Hz 2 ch (eng)"`, for messages; a codec
    /// libavcodec does not know is named by its tag (`"track 2: data tmcd"`).
    public var description: String {
        let codec = codecName == "none" ? codecTag ?? codecName : codecName
        var text = "track \(index): \(kind) \(codec)"
        if let sampleRate, let channelCount { text += " \(sampleRate) Hz \(channelCount) ch" }
        if let width, let height { text += " \(width)x\(height)" }
        if let language { text += " (\(language))" }
        return text
    }

    /// A time in this track's ticks, `.invalid` for none.
    func time(_ ticks: Int64?) -> MediaTime {
        guard let ticks, timeBase.isValid else { return .invalid }
        return MediaTime(value: ticks &* timeBase.value, timescale: timeBase.timescale)
    }
}

/// One packet of a track that is carried as it is (audio, subtitles, data),
/// with the container's timestamps in the track's time base.
public struct TrackPacket: Sendable {
    /// The index of the track (``MediaTrack/index``) in the file read.
    public var track: Int
    /// The packet's bytes as the container stores them.
    public var data: [UInt8]
    /// Presentation and decode times; `.invalid` when the container has none.
    public var pts: MediaTime
    /// The decode time; `.invalid` when the container has none.
    public var dts: MediaTime
    /// The duration; `.invalid` when unknown.
    public var duration: MediaTime
    /// Whether the container marks the packet as a keyframe (a random-access point).
    public var isKeyframe: Bool
    /// Whether the demuxer found the payload damaged (`AV_PKT_FLAG_CORRUPT`:
    /// an MPEG-TS continuity error, a truncated read).
    public var isCorrupt: Bool
    /// The packet's side data (such as the samples to skip at the start of
    /// an AAC or Opus track), carried along to the writer.
    package var sideData: [PacketSideData]
}

/// What ``MovieReader/nextItem()`` returns: a sample of the video track or a
/// packet of another track, in file order.
public enum MovieItem: Sendable {
    case sample(CompressedSample)
    case packet(TrackPacket)
}

extension Muxer {
    /// Writes one packet of a copied track (``MovieWriter`` and
    /// ``StreamPublisher`` alike): its times when known, its flags and side
    /// data, into output stream `stream`.
    func write(_ packet: TrackPacket, stream: Int, while action: String) throws(MediaError) {
        guard packet.data.count <= Muxer.maximumPacketSize else {
            throw .invalidArgument("a packet of \(packet.data.count) bytes is too large for libavformat")
        }
        try writeCopiedPacket(
            packet.data, stream: stream, pts: packet.pts.isValid ? packet.pts : nil,
            dts: packet.dts.isValid ? packet.dts : nil, duration: packet.duration.isValid ? packet.duration : nil,
            isKeyframe: packet.isKeyframe, sideData: packet.sideData, while: action)
    }
}
