import FormatConv
import Testing

struct AVCDecoderConfigurationRecordTests {
    /// CONFORMANCE 18: the seed avcC.
    static let seed: [UInt8] = [
        0x01, 0x64, 0x00, 0x0A, 0xFF, 0xE1, 0x00, 0x19, 0x67, 0x64, 0x00, 0x0A, 0xAC, 0x72, 0x84, 0x44, 0x26, 0x84,
        0x00, 0x00, 0x03, 0x00, 0x04, 0x00, 0x00, 0x03, 0x00, 0xCA, 0x3C, 0x48, 0x96, 0x11, 0x80, 0x01, 0x00, 0x07,
        0x68, 0xE8, 0x43, 0x8F, 0x13, 0x21, 0x30,
    ]

    @Test("CONFORMANCE 18: the seed avcC is High 100, level 10, 4-byte lengths, 25-byte SPS, 7-byte PPS")
    func seedRecord() throws {
        let record = try AVCDecoderConfigurationRecord(bytes: Self.seed)
        #expect(record.AVCProfileIndication == 100)
        #expect(record.AVCLevelIndication == 10)
        #expect(record.lengthSizeMinusOne == 3)
        #expect(record.sequenceParameterSets.map(\.count) == [25])
        #expect(record.pictureParameterSets.map(\.count) == [7])
        // High profile, but the record stops after the PPS: no extension.
        #expect(record.highProfileExtension == nil)
        #expect(record.serialized() == Self.seed)

        let description = try FormatDescription(avcC: Self.seed)
        #expect(description.codec == .h264)
        #expect(description.profile == 100)
        #expect(description.level == 10)
        #expect(description.nalUnitHeaderLength == 4)
        #expect(description.parameterSetCount == 2)
        #expect(try description.parameterSet(at: 0).count == 25)
        #expect(try description.parameterSet(at: 1).count == 7)
        #expect(description.record == Self.seed)
        // Decoded by hand from the SPS bits: 4×4 macroblocks, frame_mbs_only,
        // no cropping, 16 reference frames, VUI timing 1 / 50 (two ticks a frame).
        #expect(description.width == 64 && description.height == 64)
        #expect(description.maxReferenceFrames == 16)
        #expect(description.vuiFrameRate == MediaTime(value: 1, timescale: 25))
        #expect(description.chromaFormat == .yuv420 && description.bitDepth == 8)
    }

    /// Records made from SPSs of each profile: 66/77/88 carry no extension, the
    /// others do, and each parses back to itself.
    @Test(
        "CONFORMANCE 16: which profiles carry the High-profile extension",
        arguments: [
            (66, false), (77, false), (88, false), (100, true), (110, true), (122, true), (244, true), (44, true),
            (118, true), (128, true),
        ])
    func extensionByProfile(profile: Int, hasExtension: Bool) throws {
        var builder = H264SPSBuilder()
        builder.profile_idc = profile
        if profile == 110 { builder.bit_depth_luma_minus8 = 2 }
        if profile == 110 { builder.bit_depth_chroma_minus8 = 2 }
        if profile == 122 { builder.chroma_format_idc = 2 }
        if profile == 244 { builder.chroma_format_idc = 3 }
        let record = try AVCDecoderConfigurationRecord(
            sequenceParameterSets: [builder.nal()], pictureParameterSets: [h264PPS(id: 0)])
        #expect((record.highProfileExtension != nil) == hasExtension)
        let bytes = record.serialized()
        let sizeWithoutExtension = 6 + 2 + builder.nal().count + 1 + 2 + h264PPS(id: 0).count
        #expect(bytes.count == sizeWithoutExtension + (hasExtension ? 4 : 0))
        if hasExtension {
            let tail = Array(bytes.suffix(4))
            let expectedChroma = H264SequenceParameterSet.highProfiles.contains(profile) ? builder.chroma_format_idc : 1
            let depth = H264SequenceParameterSet.highProfiles.contains(profile) ? builder.bit_depth_luma_minus8 : 0
            #expect(tail == [0xFC | UInt8(expectedChroma), 0xF8 | UInt8(depth), 0xF8 | UInt8(depth), 0])
        }
        let parsed = try AVCDecoderConfigurationRecord(bytes: bytes)
        #expect(parsed == record)
        #expect(parsed.serialized() == bytes)
    }

    @Test("the extension carries SPS extension NAL units (type 13)")
    func spsExtensions() throws {
        let ext: [UInt8] = [0x6D, 0x88, 0x80]  // seq_parameter_set_id 0 …
        let description = try FormatDescription(
            h264ParameterSets: [H264SPSBuilder().nal(), h264PPS(id: 0), ext])
        #expect(description.parameterSetCount == 3)
        #expect(try description.parameterSet(at: 2) == ext)
        let record = try AVCDecoderConfigurationRecord(bytes: description.record)
        #expect(record.highProfileExtension?.sequenceParameterSetExtensions == [ext])
        #expect(try FormatDescription(avcC: description.record) == description)
    }

    /// A record whose High-profile extension is cut after 0...3 of its 4 fixed
    /// bytes, or whose SPS-extension array runs past the end, parses with the
    /// extension absent and serializes back to the same bytes.
    @Test("CONFORMANCE 16: a truncated extension is tolerated as absent", arguments: 0..<6)
    func truncatedExtension(cut: Int) throws {
        let full = try FormatDescription(
            h264ParameterSets: [H264SPSBuilder().nal(), h264PPS(id: 0), [0x6D, 0x88, 0x80]]
        ).record
        // The extension is the last 4 + 2 + 3 bytes; keep `cut` of them (but never all).
        let withoutExtension = full.count - 9
        let bytes = Array(full.prefix(withoutExtension + [0, 1, 2, 3, 5, 7][cut]))
        let record = try AVCDecoderConfigurationRecord(bytes: bytes)
        #expect(record.highProfileExtension == nil)
        #expect(record.serialized() == bytes)
        let description = try FormatDescription(avcC: bytes)
        #expect(description.parameterSetCount == 2)
        #expect(description.chromaFormat == .yuv420)
    }

    /// CONFORMANCE 3: reserved bits all 0 or all 1 give the same fields; each
    /// record serializes back to its own bytes.
    @Test("CONFORMANCE 3: reserved bits set and unset parse identically")
    func reservedBits() throws {
        let ones = try FormatDescription(h264ParameterSets: [H264SPSBuilder().nal(), h264PPS(id: 0)]).record
        var zeros = ones
        zeros[4] &= 0b11
        zeros[5] &= 0b1_1111
        let extensionStart = zeros.count - 4
        zeros[extensionStart] &= 0b11
        zeros[extensionStart + 1] &= 0b111
        zeros[extensionStart + 2] &= 0b111
        #expect(zeros != ones)
        let a = try AVCDecoderConfigurationRecord(bytes: ones)
        let b = try AVCDecoderConfigurationRecord(bytes: zeros)
        #expect(a.lengthSizeMinusOne == b.lengthSizeMinusOne)
        #expect(a.sequenceParameterSets == b.sequenceParameterSets)
        #expect(a.pictureParameterSets == b.pictureParameterSets)
        #expect(a.highProfileExtension?.chroma_format == b.highProfileExtension?.chroma_format)
        #expect(b.highProfileExtension?.bit_depth_luma_minus8 == 0)
        #expect(a.serialized() == ones)
        #expect(b.serialized() == zeros)
        let da = try FormatDescription(avcC: ones)
        let db = try FormatDescription(avcC: zeros)
        #expect(da.parameterSets == db.parameterSets)
        #expect(da.width == db.width && da.profile == db.profile && da.nalUnitHeaderLength == 4)
        #expect(db.nalUnitHeaderLength == 4)
        #expect(da.canAccept(db))
    }

    @Test(
        "malformed records are errors that name the field and offset",
        arguments: [
            ([], "configurationVersion"),
            ([0x02, 0x64, 0x00, 0x0A, 0xFF, 0xE1], "configurationVersion is 2"),
            ([0x01, 0x64, 0x00, 0x0A, 0xFF, 0xE1, 0x00], "sequenceParameterSetLength[0]"),
            ([0x01, 0x64, 0x00, 0x0A, 0xFF, 0xE1, 0x00, 0x05, 0x67], "sequenceParameterSetNALUnit[0] at offset 8"),
        ] as [([UInt8], String)])
    func malformed(bytes: [UInt8], fragment: String) {
        do {
            _ = try AVCDecoderConfigurationRecord(bytes: bytes)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidData)
            #expect(error.message.contains(fragment), "\(error.message)")
        }
    }

    @Test("avcC with lengthSizeMinusOne 2 is rejected with a clear error; 0, 1 and 3 are accepted")
    func lengthSizes() throws {
        for (minusOne, accepted) in [(0, true), (1, true), (2, false), (3, true)] {
            var bytes = Self.seed
            bytes[4] = 0xFC | UInt8(minusOne)
            if accepted {
                #expect(try FormatDescription(avcC: bytes).nalUnitHeaderLength == minusOne + 1)
            } else {
                do {
                    _ = try FormatDescription(avcC: bytes)
                    Issue.record("3-byte lengths must be rejected")
                } catch {
                    #expect(error.code == .invalidData)
                    #expect(error.message.contains("lengthSizeMinusOne is 2"))
                }
            }
        }
    }

    @Test("truncations and corruptions of a record never crash")
    func fuzzed() {
        let good = (try? FormatDescription(h264ParameterSets: [H264SPSBuilder().nal(), h264PPS(id: 0)]).record) ?? []
        for bytes in mutations(of: good) + mutations(of: Self.seed) {
            if let record = try? AVCDecoderConfigurationRecord(bytes: bytes) {
                #expect(record.serialized() == bytes)
            }
            _ = try? FormatDescription(avcC: bytes)
        }
    }
}
