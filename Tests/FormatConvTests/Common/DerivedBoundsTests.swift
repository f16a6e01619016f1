import FormatConv
import MediaCore
import Testing

/// Regression tests for ranges whose bounds come from fields parsed earlier in
/// the same parameter set. A `ClosedRange` built from such bounds traps when
/// they cross (`0...width / 2 - 1` with a width of 1); every parser reads these
/// fields with `BitReader.ue(_:from:through:)`, which reports instead.
struct DerivedBoundsTests {
    @Test("an empty derived range is an invalid-data error naming the field")
    func emptyRangeIsAnError() {
        var writer = BitWriter()
        writer.ue(0)
        writer.trailingBits()
        var reader = BitReader(rbsp: writer.bytes, context: "test")
        do {
            _ = try reader.ue("conf_win_left_offset", from: 0, through: -1)
            Issue.record("an empty range must be an error")
        } catch {
            #expect(error.code == .invalidData)
            #expect(error.message.contains("conf_win_left_offset = 0 has no valid value"), "\(error.message)")
            #expect(error.message.contains("0...-1"), "\(error.message)")
        }
        let reader2 = BitReader(rbsp: [0x80], context: "test")
        #expect(throws: MediaError.self) { try reader2.check(3, from: 5, through: 4, "x") }
        #expect(throws: Never.self) { try reader2.check(4, from: 4, through: 4, "x") }
    }

    @Test("HEVC SPS: pic_width_in_luma_samples = 1 with a conformance window is refused, not trapped on")
    func hevcOnePixelWideWithWindow() {
        for window in [(0, 0, 0, 0), (1, 0, 0, 0), (0, 1, 0, 0)] {
            var b = HEVCSPSBuilder()
            b.width = 1
            b.window = window
            do {
                _ = try HEVCSequenceParameterSet(nal: b.nal())
                Issue.record("a 1-sample-wide picture must be refused")
            } catch {
                #expect(error.code == .invalidData)
                let named =
                    error.message.contains("pic_width_in_luma_samples")
                    || error.message.contains("conf_win_left_offset") || error.message.contains("conf_win_right_offset")
                #expect(named, "\(error.message)")
            }
        }
        var b = HEVCSPSBuilder()
        b.height = 1
        b.window = (0, 0, 0, 1)
        #expect(throws: MediaError.self) { try HEVCSequenceParameterSet(nal: b.nal()) }
    }

    @Test("HEVC SPS: every small size × chroma format × window parses or throws, and a parsed size is ≥ 1")
    func hevcSmallGeometries() {
        for chroma in 0...3 {
            for width in 1...17 {
                for height in [1, 2, 8, 9, 16] {
                    for window in [(0, 0, 0, 0), (1, 0, 0, 0), (0, 1, 1, 0), (3, 4, 4, 3), (8, 0, 0, 8)] {
                        var b = HEVCSPSBuilder()
                        b.chroma_format_idc = chroma
                        b.width = width
                        b.height = height
                        b.window = window
                        guard let sps = try? HEVCSequenceParameterSet(nal: b.nal()) else { continue }
                        #expect(width % 8 == 0 && height % 8 == 0, "\(width)x\(height) is not a multiple of MinCbSizeY")
                        #expect(
                            sps.width >= 1 && sps.height >= 1,
                            "\(width)x\(height) \(window) → \(sps.width)x\(sps.height)")
                    }
                }
            }
        }
    }

    @Test("H.264 SPS: crops that leave no picture are refused; every accepted crop leaves ≥ 1 sample")
    func h264Crops() {
        for chroma in [0, 1, 2, 3] {
            for frameMBsOnly in [true, false] {
                for crop in [
                    (0, 0, 0, 0), (7, 0, 0, 0), (8, 0, 0, 0), (0, 16, 0, 0), (15, 0, 0, 0), (0, 0, 7, 0),
                    (0, 0, 8, 0), (0, 0, 0, 16), (4, 4, 4, 4), (16, 16, 16, 16),
                ] {
                    var b = H264SPSBuilder()
                    b.chroma_format_idc = chroma
                    b.widthInMbs = 1
                    b.heightInMapUnits = 1
                    b.frame_mbs_only_flag = frameMBsOnly
                    b.crop = crop
                    guard let sps = try? H264SequenceParameterSet(nal: b.nal()) else { continue }
                    #expect(sps.width >= 1 && sps.height >= 1, "\(chroma) \(frameMBsOnly) \(crop)")
                }
            }
        }
        // One macroblock of 4:2:0 is 8 crop units wide: left 8 leaves nothing.
        var b = H264SPSBuilder()
        b.widthInMbs = 1
        b.crop = (8, 0, 0, 0)
        #expect(throws: MediaError.self) { try H264SequenceParameterSet(nal: b.nal()) }
        b.crop = (7, 0, 0, 0)
        #expect((try? H264SequenceParameterSet(nal: b.nal()))?.width == 2)
    }
}
