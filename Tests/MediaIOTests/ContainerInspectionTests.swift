import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

/// MediaIO's ``ContainerInspection`` of an MP4 FFmpeg wrote: as many
/// samples and keyframes as ffprobe counts, the clip's size, the `avc1`
/// entry with its record, and with `listingNALUnits` NAL units of every
/// sample.
struct ContainerInspectionTests {
    @Test func countsWhatFFprobeCounts() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let mp4 = directory.path("clip.mp4")
        let encoder = ["-c:v", "libx264", "-bf", "2", "-g", "12", "-sc_threshold", "0"]
        try ffmpegTestPattern(size: "160x120", rate: 25, frames: 48, arguments: encoder, to: mp4)
        let probed = try ffprobePacketCounts(path: mp4)
        let inspection = try ContainerInspection(path: mp4)
        #expect(inspection.container == "mp4")
        #expect(inspection.codec == .h264)
        #expect(inspection.sampleEntry == "avc1")
        #expect(inspection.record != nil)
        #expect(inspection.samples == probed.packets)
        #expect(inspection.keyframeSamples.count == probed.keyframes)
        #expect(inspection.keyframeSamples.first == 0)
        #expect(inspection.descriptions.map(\.width) == [160])
        #expect(inspection.tracks.count == 1)
        #expect(inspection.packetCounts[inspection.track] == probed.packets)
        #expect(inspection.nalUnits == nil)

        let listed = try ContainerInspection(path: mp4, listingNALUnits: true)
        let samples = Set((listed.nalUnits ?? []).compactMap(\.sample))
        #expect(samples == Set(0..<probed.packets))
    }
}
