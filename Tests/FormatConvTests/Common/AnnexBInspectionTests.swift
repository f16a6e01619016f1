import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

/// FormatConv's ``AnnexBInspection`` of streams FFmpeg's encoders wrote:
/// as many access units and keyframes as ffprobe counts, one description
/// of the clip's size, nothing dropped, and every NAL unit listed once.
struct AnnexBInspectionTests {
    @Test(arguments: [(CodecType.h264, "libx264"), (.hevc, "libx265")])
    func countsWhatFFprobeCounts(_ codec: CodecType, _ encoder: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path(codec == .h264 ? "clip.h264" : "clip.hevc")
        let quiet = encoder == "libx265" ? ["-x265-params", "log-level=error"] : []
        try ffmpegTestPattern(
            size: "160x120", rate: 25, frames: 30, arguments: ["-c:v", encoder, "-g", "10"] + quiet, to: path)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let inspection = AnnexBInspection(bytes: bytes, codec: codec)
        let probed = try ffprobePacketCounts(path: path)
        #expect(inspection.accessUnits == probed.packets)
        #expect(inspection.keyframes == probed.keyframes)
        #expect(inspection.descriptions.map(\.width) == [160])
        #expect(inspection.descriptions.map(\.height) == [120])
        #expect(inspection.dropped.entries.isEmpty, "\(inspection.dropped)")
        var listed: [AnnexBInspection.NALUnit] = []
        inspection.forEachNALUnit { listed.append($0) }
        #expect(listed.count == inspection.nalUnitCount)
        #expect(listed.first?.offset == 0)
        #expect(listed.map(\.offset) == listed.map(\.offset).sorted())
        let parameterSets = inspection.descriptions[0].parameterSets.map {
            AnnexBInspection.parameterSetName($0, codec: codec)
        }
        #expect(parameterSets == (codec == .h264 ? ["SPS", "PPS"] : ["VPS", "SPS", "PPS"]))
    }
}
