import FormatConv
import MediaCore

/// What `codecs stream serve --http` sends on its WebSocket, one message at a
/// time (documented in Sources/WebStreaming/WebStreaming.docc/WebStreaming.md):
///
/// 1. a **configuration** text message, a JSON object:
///    `{"type":"config","codec":"avc1.64001f","format":"avc","description":"AU0…",
///    "codedWidth":1280,"codedHeight":720,"width":1280,"height":720,
///    "frameRate":30}` — `format` is `"avc"`/`"hevc"` with `description` the
///    base64 `avcC`/`hvcC` record (chunks are length-prefixed, parameter sets
///    out of band), or `"annexb"` with `description` null (chunks are Annex-B
///    with the parameter sets before every keyframe, and `codec` names the
///    `avc3`/`hev1` sample entry). A new one comes before the keyframe that
///    starts a new format.
/// 2. one **binary** message per access unit, in decode order: a 30-byte
///    header, big-endian, then the access unit's bytes:
///
///    | bytes | field |
///    | --- | --- |
///    | 0 | version, 1 |
///    | 1 | flags: bit 0 keyframe |
///    | 2…9 | pts, microseconds (signed) |
///    | 10…17 | dts, microseconds (signed) |
///    | 18…25 | capture time: microseconds since 1970 when the server took the access unit |
///    | 26…29 | sequence number: the access unit's index in the stream (gaps are skips) |
public enum StreamWireFormat {
    /// The bytes before an access unit's own.
    public static let headerSize = 30

    /// How chunks are framed on the wire.
    public enum ChunkFormat: String, Sendable, Hashable {
        /// Length-prefixed NAL units, parameter sets in the configuration's
        /// description (WebCodecs `avc`/`hevc` format).
        case description
        /// Annex-B, parameter sets before every keyframe (WebCodecs `annexb`).
        case annexB = "annexb"
    }

    /// The configuration message's JSON for `description`.
    public static func configuration(
        for description: FormatDescription, format: ChunkFormat, frameRate: Double?
    ) -> String {
        let codec = description.codecString(parameterSetsInBand: format == .annexB)
        let formatName = format == .annexB ? "annexb" : (description.codec == .h264 ? "avc" : "hevc")
        let record = format == .annexB ? "null" : "\"\(Base64.encode(description.record))\""
        let rate = frameRate.map { String($0) } ?? "null"
        return "{\"type\":\"config\",\"codec\":\"\(codec)\",\"format\":\"\(formatName)\",\"description\":\(record),"
            + "\"codedWidth\":\(description.codedWidth),\"codedHeight\":\(description.codedHeight),"
            + "\"width\":\(description.width),\"height\":\(description.height),\"frameRate\":\(rate)}"
    }

    /// The header of an access unit's message.
    public static func header(
        isKeyframe: Bool, ptsMicroseconds: Int64, dtsMicroseconds: Int64, captureMicroseconds: Int64, sequence: UInt32
    ) -> [UInt8] {
        var bytes: [UInt8] = [1, isKeyframe ? 1 : 0]
        bytes.reserveCapacity(headerSize)
        for value in [ptsMicroseconds, dtsMicroseconds, captureMicroseconds] {
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> Int64(shift)))
            }
        }
        for shift in stride(from: 24, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: sequence >> UInt32(shift)))
        }
        return bytes
    }

    /// A media time in whole microseconds (rounded toward zero); 0 when invalid.
    public static func microseconds(_ time: MediaTime) -> Int64 {
        guard time.isValid, time.timescale > 0 else { return 0 }
        let (quotient, remainder) = Int64(time.value).multipliedReportingOverflow(by: 1_000_000)
        guard !remainder else { return Int64(Double(time.value) * 1_000_000 / Double(time.timescale)) }
        return quotient / Int64(time.timescale)
    }
}
