import FormatConv
import Testing

struct HEVCSequenceParameterSetTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var builder: HEVCSPSBuilder
        var width: Int
        var height: Int
        var testDescription: String { name }
    }

    static var cases: [Case] {
        var result: [Case] = []
        var b = HEVCSPSBuilder()
        result.append(Case(name: "64x48 4:2:0", builder: b, width: 64, height: 48))
        b.window = (1, 2, 3, 4)
        result.append(Case(name: "4:2:0 window", builder: b, width: 58, height: 34))
        b.chroma_format_idc = 2
        result.append(Case(name: "4:2:2 window", builder: b, width: 58, height: 41))
        b.chroma_format_idc = 3
        result.append(Case(name: "4:4:4 window", builder: b, width: 61, height: 41))
        b.chroma_format_idc = 0
        result.append(Case(name: "4:0:0 window", builder: b, width: 61, height: 41))
        b = HEVCSPSBuilder()
        b.scalingList = true
        b.longTerm = true
        b.bitDepthLumaMinus8 = 2
        b.bitDepthChromaMinus8 = 2
        result.append(Case(name: "scaling lists, long-term refs, 10-bit", builder: b, width: 64, height: 48))
        b = HEVCSPSBuilder()
        b.shortTermRPS = false
        b.vui = true
        b.timing = (1001, 30000)
        b.hrd = true
        b.subLayersMinus1 = 2
        b.minSpatialSegmentation = 200
        result.append(Case(name: "VUI with HRD, 3 sub-layers", builder: b, width: 64, height: 48))
        return result
    }

    @Test("size, conformance window, chroma and bit depth", arguments: cases)
    func geometry(_ test: Case) throws {
        let sps = try HEVCSequenceParameterSet(nal: test.builder.nal())
        #expect(sps.width == test.width)
        #expect(sps.height == test.height)
        #expect(sps.pic_width_in_luma_samples == test.builder.width)
        #expect(sps.chroma_format_idc == test.builder.chroma_format_idc)
        #expect(sps.bit_depth_luma_minus8 == test.builder.bitDepthLumaMinus8)
        #expect(sps.sps_max_dec_pic_buffering_minus1.last == 4)
        #expect(sps.sps_max_num_reorder_pics.last == 2)
        #expect(sps.num_short_term_ref_pic_sets == (test.builder.shortTermRPS ? 3 : 0))
        #expect((sps.vui != nil) == test.builder.vui)
    }

    @Test("VUI: signal type, timing past HRD parameters, min_spatial_segmentation_idc")
    func vui() throws {
        var b = HEVCSPSBuilder()
        b.vui = true
        b.timing = (1001, 30000)
        b.hrd = true
        b.subLayersMinus1 = 1
        b.minSpatialSegmentation = 4095
        let sps = try HEVCSequenceParameterSet(nal: b.nal())
        let vui = try #require(sps.vui)
        #expect(vui.sampleAspectRatio == SampleAspectRatio(horizontal: 1, vertical: 1))
        #expect(vui.videoSignal?.fullRange == true)
        #expect(vui.videoSignal?.colorPrimaries == 9 && vui.videoSignal?.transferCharacteristics == 16)
        #expect(vui.vui_hrd_parameters_present_flag)
        #expect(vui.min_spatial_segmentation_idc == 4095)
        #expect(sps.frameDuration == MediaTime(value: 1001, timescale: 30000))
    }

    @Test(
        "out-of-range fields are errors that name the syntax element",
        arguments: [
            ("sps_seq_parameter_set_id", { @Sendable (b: inout HEVCSPSBuilder) in b.id = 16 }),
            ("chroma_format_idc", { @Sendable (b: inout HEVCSPSBuilder) in b.chroma_format_idc = 4 }),
            ("pic_width_in_luma_samples", { @Sendable (b: inout HEVCSPSBuilder) in b.width = 0 }),
            ("bit_depth_luma_minus8", { @Sendable (b: inout HEVCSPSBuilder) in b.bitDepthLumaMinus8 = 9 }),
            ("conf_win_right_offset", { @Sendable (b: inout HEVCSPSBuilder) in b.window = (16, 16, 0, 0) }),
            ("sps_max_sub_layers_minus1", { @Sendable (b: inout HEVCSPSBuilder) in b.subLayersMinus1 = 7 }),
        ] as [(String, @Sendable (inout HEVCSPSBuilder) -> Void)])
    func rangeErrors(field: String, change: @Sendable (inout HEVCSPSBuilder) -> Void) {
        var b = HEVCSPSBuilder()
        change(&b)
        do {
            _ = try HEVCSequenceParameterSet(nal: b.nal())
            Issue.record("\(field) out of range must be an error")
        } catch {
            #expect(error.code == .invalidData)
            #expect(error.message.contains(field), "\(error.message)")
        }
    }

    /// min_spatial_segmentation_idc (a VUI bitstream restriction decoding
    /// does not use) out of range is accepted with a warning, as FFmpeg does.
    @Test func outOfRangeSegmentationIsAWarning() throws {
        var b = HEVCSPSBuilder()
        b.vui = true
        b.minSpatialSegmentation = 4096
        let sps = try HEVCSequenceParameterSet(nal: b.nal())
        #expect(sps.vui?.min_spatial_segmentation_idc == 4095)
        #expect(sps.warnings.count == 1)
        #expect(sps.warnings.first?.contains("min_spatial_segmentation_idc = 4096 is out of range 0...4095") == true)
    }

    @Test("truncations and corruptions never crash")
    func fuzzed() {
        var b = HEVCSPSBuilder()
        b.scalingList = true
        b.vui = true
        b.timing = (1, 25)
        b.hrd = true
        b.minSpatialSegmentation = 10
        for bytes in mutations(of: b.nal(), count: 400) {
            _ = try? HEVCSequenceParameterSet(nal: bytes)
        }
        #expect(throws: MediaError.self) { try HEVCSequenceParameterSet(nal: [0x42, 0x01]) }
    }
}
