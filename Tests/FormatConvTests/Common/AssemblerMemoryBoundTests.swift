import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

/// A peer that sends one endless NAL unit cannot grow the assembler without
/// bound: the access unit is dropped and reported, its bytes discarded as they
/// arrive, and samples resume at the next keyframe.
struct AssemblerMemoryBoundTests {
    @Test(arguments: [CodecType.h264, .hevc])
    func anEndlessNALUnitIsDroppedAndMemoryStaysBounded(codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path(codec == .h264 ? "clip.h264" : "clip.hevc")
        try ffmpegTestPattern(
            size: "96x64", frames: 10,
            arguments: [
                "-c:v", codec == .h264 ? "libx264" : "libx265", "-g", "5", "-f", codec == .h264 ? "h264" : "hevc",
            ]
                + (codec == .hevc ? ["-x265-params", "log-level=error"] : []), to: path)
        let clip = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // A start code and 1 MB with no zero byte: a NAL unit that never ends.
        // Its slice header starts a new picture (H.264 first_mb_in_slice 0,
        // HEVC first_slice_segment_in_pic_flag 1), so the clip's last picture
        // before it is complete and comes out.
        let header: [UInt8] = codec == .h264 ? [0x01, 0x80] : [0x02, 0x01, 0xD5]
        let endless = [0, 0, 0, 1] + header + [UInt8](repeating: 0x55, count: 1 << 20)
        let stream = clip + endless + clip
        let limit = 64 * 1024
        var assembler = AccessUnitAssembler(codec: codec, maximumAccessUnitSize: limit)
        var outputs: [AssemblerOutput] = []
        var largest = 0
        for start in stride(from: 0, to: stream.count, by: 4096) {
            outputs += assembler.append(stream[start..<min(stream.count, start + 4096)])
            largest = max(largest, assembler.bytesInProgress)
        }
        outputs += assembler.finish()
        #expect(largest <= limit, "the access unit in progress held \(largest) bytes")
        let delivered = samples(outputs)
        #expect(delivered.count == 20, "both copies of the clip, and nothing of the endless unit")
        #expect(delivered[10].isKeyframe)
        let oversized = drops(outputs).filter { $0.reason.contains("grew past the maximum of 65536 bytes") }
        #expect(oversized.count == 1 && oversized.first?.count == 1, "\(drops(outputs))")
        // Every sample of each copy equals the same sample assembled on its own.
        let alone = samples(assemble(clip, codec: codec))
        #expect(delivered.prefix(10).map(\.data) == alone.map(\.data))
        #expect(delivered.suffix(10).map(\.data) == alone.map(\.data))
    }

    /// An unending slice of the picture in progress takes that picture with it:
    /// a picture with a slice missing is never handed out.
    @Test func anEndlessSliceOfThePictureInProgressDropsThePicture() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("clip.h264")
        try ffmpegTestPattern(
            size: "96x64", frames: 10, arguments: ["-c:v", "libx264", "-g", "5", "-bf", "0", "-f", "h264"], to: path)
        let clip = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // A referenced non-IDR slice (nal_ref_idc 2, like x264's P pictures)
        // with first_mb_in_slice 1 ("010"), slice_type 0 ("1") and PPS 0 ("1"):
        // the same picture as the last one.
        let endless = [0, 0, 0, 1, 0x41, 0x5B] + [UInt8](repeating: 0x55, count: 1 << 20)
        var assembler = AccessUnitAssembler(codec: .h264, maximumAccessUnitSize: 64 * 1024)
        var outputs: [AssemblerOutput] = []
        let stream = clip + endless + clip
        for start in stride(from: 0, to: stream.count, by: 4096) {
            outputs += assembler.append(stream[start..<min(stream.count, start + 4096)])
        }
        outputs += assembler.finish()
        #expect(samples(outputs).count == 19)
        let oversized = drops(outputs).filter { $0.reason.contains("grew past the maximum") }
        #expect(oversized.count == 1 && oversized.first?.count == 2, "the last picture and the endless slice")
    }

    @Test func theDefaultLimitIs64MiB() {
        #expect(AccessUnitAssembler.defaultMaximumAccessUnitSize == 64 << 20)
        #expect(AccessUnitAssembler(codec: .h264).maximumAccessUnitSize == 64 << 20)
    }
}
