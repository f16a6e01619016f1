import FormatConv
import Testing

struct H264SequenceParameterSetTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var builder: H264SPSBuilder
        var width: Int
        var height: Int
        var codedWidth: Int
        var codedHeight: Int
        var chroma: ChromaFormat
        var testDescription: String { name }
    }

    static var cases: [Case] {
        var result: [Case] = []
        var b = H264SPSBuilder()
        result.append(
            Case(
                name: "High 4:2:0 320x240", builder: b, width: 320, height: 240, codedWidth: 320, codedHeight: 240,
                chroma: .yuv420))
        b.crop = (1, 2, 3, 4)  // CropUnitX 2, CropUnitY 2
        result.append(
            Case(
                name: "4:2:0 cropped", builder: b, width: 314, height: 226, codedWidth: 320, codedHeight: 240,
                chroma: .yuv420))
        b.chroma_format_idc = 2
        b.profile_idc = 122
        result.append(
            Case(
                name: "4:2:2 cropped", builder: b, width: 314, height: 233, codedWidth: 320, codedHeight: 240,
                chroma: .yuv422))
        b.chroma_format_idc = 3
        b.profile_idc = 244
        result.append(
            Case(
                name: "4:4:4 cropped", builder: b, width: 317, height: 233, codedWidth: 320, codedHeight: 240,
                chroma: .yuv444))
        b.separate_colour_plane_flag = true
        result.append(
            Case(
                name: "separate planes", builder: b, width: 317, height: 233, codedWidth: 320, codedHeight: 240,
                chroma: .yuv444))
        b = H264SPSBuilder()
        b.chroma_format_idc = 0
        b.crop = (1, 1, 1, 1)
        result.append(
            Case(
                name: "monochrome cropped", builder: b, width: 318, height: 238, codedWidth: 320, codedHeight: 240,
                chroma: .monochrome))
        b = H264SPSBuilder()
        b.frame_mbs_only_flag = false
        b.heightInMapUnits = 9
        b.crop = (0, 0, 0, 2)  // CropUnitY = 2 × 2
        result.append(
            Case(
                name: "interlaced (field map units)", builder: b, width: 320, height: 280, codedWidth: 320,
                codedHeight: 288, chroma: .yuv420))
        b = H264SPSBuilder()
        b.profile_idc = 66
        b.chroma_format_idc = 2  // ignored: Baseline has no chroma_format_idc
        result.append(
            Case(
                name: "Baseline", builder: b, width: 320, height: 240, codedWidth: 320, codedHeight: 240,
                chroma: .yuv420))
        b = H264SPSBuilder()
        b.scalingLists = true
        b.pic_order_cnt_type = 1
        result.append(
            Case(
                name: "scaling lists, POC type 1", builder: b, width: 320, height: 240, codedWidth: 320,
                codedHeight: 240, chroma: .yuv420))
        b.chroma_format_idc = 3
        b.profile_idc = 244
        result.append(
            Case(
                name: "12 scaling lists (4:4:4)", builder: b, width: 320, height: 240, codedWidth: 320,
                codedHeight: 240, chroma: .yuv444))
        b = H264SPSBuilder()
        b.pic_order_cnt_type = 2
        b.widthInMbs = 1
        b.heightInMapUnits = 1
        b.crop = (0, 7, 0, 7)
        result.append(
            Case(
                name: "2x2 (smallest crop)", builder: b, width: 2, height: 2, codedWidth: 16, codedHeight: 16,
                chroma: .yuv420))
        return result
    }

    @Test("size, crop and chroma format", arguments: cases)
    func geometry(_ test: Case) throws {
        let sps = try H264SequenceParameterSet(nal: test.builder.nal())
        #expect(sps.width == test.width)
        #expect(sps.height == test.height)
        #expect(sps.codedWidth == test.codedWidth)
        #expect(sps.codedHeight == test.codedHeight)
        #expect(sps.chromaFormat == test.chroma)
        #expect(sps.profile_idc == test.builder.profile_idc)
        #expect(sps.max_num_ref_frames == 4)
    }

    @Test("VUI: aspect ratio, colour description, timing, HRD skipped, bitstream restriction")
    func vui() throws {
        var b = H264SPSBuilder()
        b.vui = true
        b.aspectRatioIDC = 255
        b.colour = (9, 16, 9, true)
        b.timing = (1001, 60000)
        b.nalHRD = true
        b.reorder = (2, 4)
        let sps = try H264SequenceParameterSet(nal: b.nal())
        let vui = try #require(sps.vui)
        #expect(vui.sampleAspectRatio == SampleAspectRatio(horizontal: 4, vertical: 3))
        #expect(
            vui.videoSignal
                == VideoSignalType(
                    videoFormat: 5, fullRange: true, colorPrimaries: 9, transferCharacteristics: 16,
                    matrixCoefficients: 9))
        #expect(vui.chroma_sample_loc_type_top_field == 1)
        #expect(vui.num_units_in_tick == 1001 && vui.time_scale == 60000)
        #expect(vui.nal_hrd_parameters_present_flag)
        #expect(vui.max_num_reorder_frames == 2)
        #expect(vui.max_dec_frame_buffering == 4)
        #expect(sps.frameDuration == MediaTime(value: 1001, timescale: 30000))

        b.aspectRatioIDC = 14
        b.nalHRD = false
        b.reorder = nil
        let other = try H264SequenceParameterSet(nal: b.nal())
        #expect(other.vui?.sampleAspectRatio == SampleAspectRatio(horizontal: 4, vertical: 3))
        #expect(other.vui?.max_num_reorder_frames == nil)
    }

    /// CONFORMANCE 5: fields after an emulation-prevention byte are read only
    /// after the byte is removed; reading the escaped bytes gives other values.
    @Test("CONFORMANCE 5: SPS fields are parsed after emulation-prevention bytes are removed")
    func emulationPrevention() throws {
        let seedSPS = Array(AVCDecoderConfigurationRecordTests.seed[8..<33])
        #expect(RBSP.emulationPreventionByteCount(in: seedSPS) == 2)
        let sps = try H264SequenceParameterSet(nal: seedSPS)
        #expect(sps.profile_idc == 100 && sps.level_idc == 10)
        #expect(sps.vui?.num_units_in_tick == 1)
        #expect(sps.vui?.time_scale == 50)
        let raw = try? H264SequenceParameterSet(rbsp: Array(seedSPS.dropFirst()))
        #expect(raw?.vui?.time_scale != 50)

        // An SPS whose timing fields contain zero runs gets EPBs when escaped.
        var b = H264SPSBuilder()
        b.vui = true
        b.timing = (0x0000_0001, 0x0000_0100)
        let nal = b.nal()
        #expect(RBSP.emulationPreventionByteCount(in: nal) > 0)
        let parsed = try H264SequenceParameterSet(nal: nal)
        #expect(parsed.vui?.num_units_in_tick == 1 && parsed.vui?.time_scale == 256)
        let description = try FormatDescription(h264ParameterSets: [nal, h264PPS(id: 0)])
        #expect(try description.parameterSet(at: 0) == nal)
    }

    @Test(
        "out-of-range fields are errors that name the syntax element",
        arguments: [
            ("seq_parameter_set_id", { @Sendable (b: inout H264SPSBuilder) in b.seq_parameter_set_id = 32 }),
            ("chroma_format_idc", { @Sendable (b: inout H264SPSBuilder) in b.chroma_format_idc = 4 }),
            ("bit_depth_luma_minus8", { @Sendable (b: inout H264SPSBuilder) in b.bit_depth_luma_minus8 = 7 }),
            ("pic_order_cnt_type", { @Sendable (b: inout H264SPSBuilder) in b.pic_order_cnt_type = 3 }),
            ("max_num_ref_frames", { @Sendable (b: inout H264SPSBuilder) in b.max_num_ref_frames = 17 }),
            ("frame_crop_right_offset", { @Sendable (b: inout H264SPSBuilder) in b.crop = (100, 100, 0, 0) }),
            ("frame_crop_bottom_offset", { @Sendable (b: inout H264SPSBuilder) in b.crop = (0, 0, 60, 60) }),
        ] as [(String, @Sendable (inout H264SPSBuilder) -> Void)])
    func rangeErrors(field: String, change: @Sendable (inout H264SPSBuilder) -> Void) {
        var b = H264SPSBuilder()
        change(&b)
        do {
            _ = try H264SequenceParameterSet(nal: b.nal())
            Issue.record("\(field) out of range must be an error")
        } catch {
            #expect(error.code == .invalidData)
            #expect(error.message.contains(field), "\(error.message)")
        }
    }

    @Test("truncations and corruptions never crash; a VUI cut short counts as absent")
    func fuzzed() throws {
        var b = H264SPSBuilder()
        b.vui = true
        b.timing = (1, 50)
        b.reorder = (1, 2)
        b.scalingLists = true
        let nal = b.nal()
        for bytes in mutations(of: nal, count: 400) {
            _ = try? H264SequenceParameterSet(nal: bytes)
        }
        // Cut inside the VUI: the SPS still parses, without VUI.
        let full = try H264SequenceParameterSet(nal: nal)
        let cut = try H264SequenceParameterSet(nal: Array(nal.prefix(nal.count - 4)))
        #expect(full.vui != nil)
        #expect(cut.vui == nil)
        #expect(cut.width == full.width)
        #expect(throws: MediaError.self) { try H264SequenceParameterSet(nal: [0x67, 0x64, 0x00]) }
        #expect(throws: MediaError.self) { try H264SequenceParameterSet(nal: [0x68, 0x64, 0x00, 0x1F]) }
    }
}
