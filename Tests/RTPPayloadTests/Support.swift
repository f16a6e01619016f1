import DecodeSession
import FormatConv
import Foundation
import MediaCore
import RTPPayload
import TestSupport

/// Streams encoded at test time with the ffmpeg CLI, cut into samples by
/// FormatConv's assembler.
enum RTPTestStreams {
    struct Stream {
        var path: String
        var codec: CodecType
        var samples: [CompressedSample]
    }

    /// `frames` frames of testsrc2 at 320×240, 25 fps, keyframe every `gop`
    /// frames (IDR, no scene cuts), `bframes` B-frames, `slices` slices.
    static func encode(
        _ codec: CodecType, frames: Int = 60, gop: Int = 12, bframes: Int = 0, slices: Int = 1, openGOP: Bool = false,
        extra: [String] = [], in directory: TemporaryDirectory, name: String = "clip"
    ) throws -> Stream {
        let path = directory.path("\(name).\(annexBFileExtension(codec))")
        let arguments: [String]
        switch codec {
        case .h264:
            arguments = [
                "-pix_fmt", "yuv420p", "-c:v", "libx264", "-g", "\(gop)", "-keyint_min", "\(gop)", "-sc_threshold", "0",
                "-bf", "\(bframes)", "-slices", "\(slices)",
            ]
        case .hevc:
            arguments = [
                "-pix_fmt", "yuv420p", "-c:v", "libx265", "-x265-params",
                "log-level=error:keyint=\(gop):min-keyint=\(gop):scenecut=0:open-gop=\(openGOP ? 1 : 0)"
                    + ":bframes=\(bframes)",
            ]
        }
        try ffmpegTestPattern(size: "320x240", rate: 25, frames: frames, arguments: arguments + extra, to: path)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let samples = TestSupport.samples(assemble(bytes, codec: codec))
        return Stream(path: path, codec: codec, samples: samples)
    }
}

/// Every packet of `samples`, in order.
func packetizeAll(_ samples: [CompressedSample], _ configuration: RTPPacketizer.Configuration) throws -> [[UInt8]] {
    var packetizer = RTPPacketizer(configuration: configuration)
    var batch = RTPPacketBatch()
    var packets: [[UInt8]] = []
    for sample in samples {
        batch.removeAll()
        try packetizer.packetize(sample, into: &batch)
        packets += batch.packets
    }
    return packets
}

/// Everything a new depacketizer hands out for `packets`, `finish()`
/// included.
func depacketizeAll(_ packets: [[UInt8]], _ configuration: RTPDepacketizer.Configuration) -> (
    outputs: [RTPDepacketizerOutput], statistics: RTPDepacketizerStatistics
) {
    var depacketizer = RTPDepacketizer(configuration: configuration)
    var outputs: [RTPDepacketizerOutput] = []
    for packet in packets { outputs += depacketizer.receive(packet) }
    outputs += depacketizer.finish()
    return (outputs, depacketizer.statistics)
}

func emitted(_ outputs: [RTPDepacketizerOutput]) -> [CompressedSample] {
    outputs.compactMap { if case .sample(let sample) = $0 { sample } else { nil } }
}

func dropReports(_ outputs: [RTPDepacketizerOutput]) -> [RTPDropReport] {
    outputs.compactMap { if case .dropped(let report) = $0 { report } else { nil } }
}

func lossEvents(_ outputs: [RTPDepacketizerOutput]) -> [RTPLossEvent] {
    outputs.compactMap { if case .loss(let event) = $0 { event } else { nil } }
}

/// An RTP packet's header and payload.
func split(_ packet: [UInt8]) throws -> (header: RTPHeader, payload: [UInt8]) {
    let (header, range) = try RTPHeader.parse(packet)
    return (header, Array(packet[range]))
}

/// A packet with the fields given, written by hand (RFC 3550 5.1), not by
/// the code under test.
func handPacket(
    sequenceNumber: UInt16, timestamp: UInt32, marker: Bool = false, payloadType: UInt8 = 96,
    ssrc: UInt32 = 0x0102_0304, payload: [UInt8]
) -> [UInt8] {
    [
        0x80, (marker ? 0x80 : 0) | payloadType, UInt8(sequenceNumber >> 8), UInt8(sequenceNumber & 0xFF),
        UInt8(timestamp >> 24), UInt8((timestamp >> 16) & 0xFF), UInt8((timestamp >> 8) & 0xFF),
        UInt8(timestamp & 0xFF), UInt8(ssrc >> 24), UInt8((ssrc >> 16) & 0xFF), UInt8((ssrc >> 8) & 0xFF),
        UInt8(ssrc & 0xFF),
    ] + payload
}

/// The seed example's H.264 parameter sets (CONFORMANCE case 18) and small
/// hand-made slices that refer to them.
enum HandMadeH264 {
    static let sps: [UInt8] = [
        0x67, 0x64, 0x00, 0x0A, 0xAC, 0x72, 0x84, 0x44, 0x26, 0x84, 0x00, 0x00, 0x03, 0x00, 0x04, 0x00, 0x00, 0x03,
        0x00, 0xCA, 0x3C, 0x48, 0x96, 0x11, 0x80,
    ]
    static let pps: [UInt8] = [0x68, 0xE8, 0x43, 0x8F, 0x13, 0x21, 0x30]
    /// An IDR slice: first_mb_in_slice 0, slice_type 7 (I), pps id 0, then
    /// `size - 3` bytes of filler.
    static func idr(size: Int = 40, fill: UInt8 = 0x11) -> [UInt8] {
        [0x65, 0x88, 0x80] + [UInt8](repeating: fill, count: size - 3)
    }
    /// A P slice (nal_ref_idc 2): first_mb_in_slice 0, slice_type 5, pps id 0.
    static func pSlice(size: Int = 30, fill: UInt8 = 0x22) -> [UInt8] {
        [0x41, 0x9A] + [UInt8](repeating: fill, count: size - 2)
    }
    static var description: FormatDescription {
        get throws { try FormatDescription(h264ParameterSets: [sps, pps]) }
    }

    /// A sample of the NAL units at frame `index` (25 fps).
    static func sample(_ nals: [[UInt8]], index: Int, keyframe: Bool) throws -> CompressedSample {
        CompressedSample(
            data: try LengthPrefixed.write(nals, lengthSize: 4), formatDescription: try description,
            pts: MediaTime(value: Int64(index), timescale: 25), dts: MediaTime(value: Int64(index), timescale: 25),
            duration: MediaTime(value: 1, timescale: 25), isKeyframe: keyframe)
    }

    /// A keyframe every `gop` frames, P frames between; every sample's
    /// slices are `sliceSize` bytes.
    static func stream(frames: Int, gop: Int, sliceSize: Int = 40) throws -> [CompressedSample] {
        try (0..<frames).map { index in
            index % gop == 0
                ? try sample([idr(size: sliceSize, fill: UInt8(index))], index: index, keyframe: true)
                : try sample([pSlice(size: sliceSize, fill: UInt8(index))], index: index, keyframe: false)
        }
    }
}
