import FormatConv
import Testing

struct FormatDescriptionTests {
    static func h264(_ change: (inout H264SPSBuilder) -> Void = { _ in }, length: Int = 4) throws -> FormatDescription {
        var b = H264SPSBuilder()
        change(&b)
        return try FormatDescription(h264ParameterSets: [b.nal(), h264PPS(id: 0)], nalUnitHeaderLength: length)
    }

    /// CONFORMANCE 10: `parameterSet(at:)` with index ≥ count (or < 0) is an
    /// error naming the index and the count.
    @Test("CONFORMANCE 10: parameterSet(at:) out of range", arguments: [-1, 2, 3, 100])
    func indexOutOfRange(index: Int) throws {
        let description = try FormatDescription(avcC: AVCDecoderConfigurationRecordTests.seed)
        #expect(description.parameterSetCount == 2)
        do {
            _ = try description.parameterSet(at: index)
            Issue.record("index \(index) must be out of range")
        } catch {
            #expect(error.code == .indexOutOfRange)
            #expect(error.message.contains("\(index)"))
            #expect(error.message.contains("2 parameter sets"))
        }
    }

    @Test(
        "CONFORMANCE 10: count, NAL length size and bytes (EPBs kept) come back", arguments: [1, 2, 4])
    func roundTripsBytes(length: Int) throws {
        let seed = AVCDecoderConfigurationRecordTests.seed
        let sps = Array(seed[8..<33])
        let pps = Array(seed[36...])
        let description = try FormatDescription(h264ParameterSets: [sps, pps], nalUnitHeaderLength: length)
        #expect(description.nalUnitHeaderLength == length)
        #expect(description.parameterSetCount == 2)
        #expect(try description.parameterSet(at: 0) == sps)
        #expect(try description.parameterSet(at: 1) == pps)
        #expect(description.parameterSets == [sps, pps])
        #expect(RBSP.emulationPreventionByteCount(in: try description.parameterSet(at: 0)) == 2)
        #expect(description.record[4] == 0xFC | UInt8(length - 1))
        #expect(try FormatDescription(avcC: description.record) == description)
    }

    @Test("NAL length size 3 is rejected with a clear error; others outside 1, 2, 4 too", arguments: [0, 3, 5, 8])
    func badLengthSizes(length: Int) throws {
        let seed = AVCDecoderConfigurationRecordTests.seed
        for codec in CodecType.allCases {
            do {
                if codec == .h264 {
                    _ = try FormatDescription(
                        h264ParameterSets: [Array(seed[8..<33]), Array(seed[36...])], nalUnitHeaderLength: length)
                } else {
                    _ = try FormatDescription(
                        hevcParameterSets: [hevcVPS(), HEVCSPSBuilder().nal(), hevcPPS()], nalUnitHeaderLength: length)
                }
                Issue.record("\(codec) length \(length) must be rejected")
            } catch {
                #expect(error.code == .invalidArgument)
                #expect(error.message.contains("\(length)"))
                #expect(error.message.contains("1, 2 or 4"))
            }
        }
    }

    @Test(
        "parameter-set lists that lack a required set or hold a foreign NAL unit are errors",
        arguments: [
            ([[0x68, 0xCE, 0x38, 0x80]], "at least one SPS"),
            ([H264SPSBuilder().nal()], "at least one SPS and one PPS"),
            ([H264SPSBuilder().nal(), h264PPS(id: 0), [0x65, 0x88]], "nal_unit_type 5"),
            ([H264SPSBuilder().nal(), h264PPS(id: 0), []], "empty"),
        ] as [([[UInt8]], String)])
    func h264Incomplete(sets: [[UInt8]], fragment: String) {
        do {
            _ = try FormatDescription(h264ParameterSets: sets)
            Issue.record("must fail")
        } catch {
            #expect(error.code == .invalidData)
            #expect(error.message.contains(fragment), "\(error.message)")
        }
    }

    @Test(
        "HEVC needs a VPS, an SPS and a PPS; SEI is accepted",
        arguments: [
            ([HEVCSPSBuilder().nal(), hevcPPS()], false),
            ([hevcVPS(), hevcPPS()], false),
            ([hevcVPS(), HEVCSPSBuilder().nal()], false),
            ([hevcVPS(), HEVCSPSBuilder().nal(), hevcPPS(), [0x26, 0x01, 0xAF]], false),  // IDR slice
            ([hevcVPS(), HEVCSPSBuilder().nal(), hevcPPS(), [0x40]], false),  // 1-byte NAL
            ([hevcVPS(), HEVCSPSBuilder().nal(), hevcPPS(), hevcPrefixSEI(), hevcSuffixSEI()], true),
        ] as [([[UInt8]], Bool)])
    func hevcSets(sets: [[UInt8]], valid: Bool) {
        do {
            let description = try FormatDescription(hevcParameterSets: sets)
            #expect(valid)
            #expect(description.parameterSetCount == sets.count)
            #expect(description.codec == .hevc)
            #expect(description.tier == 0)
        } catch {
            #expect(!valid, "\(error)")
            #expect(error.code == .invalidData)
        }
    }

    /// CONFORMANCE 11: a new resolution, profile, chroma format, bit depth, codec
    /// or length size cannot be accepted; a level or VUI change can.
    @Test(
        "CONFORMANCE 11: canAccept",
        arguments: [
            ("identical", { @Sendable (b: inout H264SPSBuilder) in }, 4, true),
            ("new level", { @Sendable (b: inout H264SPSBuilder) in b.level_idc = 31 }, 4, true),
            (
                "new VUI timing",
                { @Sendable (b: inout H264SPSBuilder) in
                    b.vui = true; b.timing = (1, 60)
                }, 4, true
            ),
            ("new SPS id", { @Sendable (b: inout H264SPSBuilder) in b.seq_parameter_set_id = 3 }, 4, true),
            ("new width", { @Sendable (b: inout H264SPSBuilder) in b.widthInMbs = 40 }, 4, false),
            ("new crop", { @Sendable (b: inout H264SPSBuilder) in b.crop = (0, 0, 0, 4) }, 4, false),
            ("new profile", { @Sendable (b: inout H264SPSBuilder) in b.profile_idc = 77 }, 4, false),
            (
                "new chroma",
                { @Sendable (b: inout H264SPSBuilder) in
                    b.chroma_format_idc = 2; b.profile_idc = 122
                }, 4, false
            ),
            ("new bit depth", { @Sendable (b: inout H264SPSBuilder) in b.bit_depth_luma_minus8 = 2 }, 4, false),
            ("new length size", { @Sendable (b: inout H264SPSBuilder) in }, 2, false),
        ] as [(String, @Sendable (inout H264SPSBuilder) -> Void, Int, Bool)])
    func canAccept(name: String, change: @Sendable (inout H264SPSBuilder) -> Void, length: Int, accepted: Bool)
        throws
    {
        let base = try Self.h264()
        let other = try Self.h264(change, length: length)
        #expect(base.canAccept(other) == accepted, "\(name)")
        #expect(base.canAccept(base))
        let hevc = try FormatDescription(hevcParameterSets: [hevcVPS(), HEVCSPSBuilder().nal(), hevcPPS()])
        #expect(!base.canAccept(hevc))
    }

    @Test("colour, aspect ratio, reorder depth and timing come from the VUI")
    func vuiFacts() throws {
        let description = try Self.h264 {
            $0.vui = true
            $0.colour = (1, 1, 1, false)
            $0.aspectRatioIDC = 2
            $0.timing = (1, 60)
            $0.reorder = (1, 3)
        }
        #expect(description.videoSignal?.colorPrimaries == 1)
        #expect(description.sampleAspectRatio == SampleAspectRatio(horizontal: 12, vertical: 11))
        #expect(description.vuiFrameRate == MediaTime(value: 1, timescale: 30))
        #expect(description.maxReorderFrames == 1)
        let plain = try Self.h264()
        #expect(plain.vuiFrameRate == nil && plain.videoSignal == nil && plain.maxReorderFrames == nil)
    }

    @Test("descriptions are equal and hash alike exactly when codec and record agree")
    func hashable() throws {
        let a = try Self.h264()
        let b = try FormatDescription(avcC: a.record)
        let c = try Self.h264 { $0.level_idc = 40 }
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != c)
        #expect(Set([a, b, c]).count == 2)
    }
}
