import FormatConv
import Testing

struct HEVCDecoderConfigurationRecordTests {
    static func sps(_ change: (inout HEVCSPSBuilder) -> Void = { _ in }) -> [UInt8] {
        var b = HEVCSPSBuilder()
        change(&b)
        return b.nal()
    }

    @Test("CONFORMANCE 14: arrays in VPS, SPS, PPS, SEI order whatever the input order")
    func arrayOrder() throws {
        let input = [hevcSuffixSEI(), hevcPPS(id: 1), hevcPrefixSEI(), Self.sps(), hevcPPS(id: 0), hevcVPS()]
        let record = try HEVCDecoderConfigurationRecord(parameterSets: input)
        #expect(record.arrays.map(\.NAL_unit_type) == [32, 33, 34, 39, 40])
        #expect(record.arrays[2].nalUnits == [hevcPPS(id: 1), hevcPPS(id: 0)])
        #expect(record.arrays.map(\.array_completeness) == [true, true, true, false, false])
        let description = try FormatDescription(hevcParameterSets: input)
        #expect(
            description.parameterSets == [
                hevcVPS(), Self.sps(), hevcPPS(id: 1), hevcPPS(id: 0), hevcPrefixSEI(), hevcSuffixSEI(),
            ])
        #expect(try description.parameterSet(at: 4) == hevcPrefixSEI())
        #expect(try HEVCDecoderConfigurationRecord(bytes: description.record) == record)
    }

    @Test("CONFORMANCE 14: array_completeness 0 and 1 both parse and round-trip", arguments: [false, true])
    func completeness(complete: Bool) throws {
        let description = try FormatDescription(
            hevcParameterSets: [hevcVPS(), Self.sps(), hevcPPS()], nalUnitHeaderLength: 4, arrayCompleteness: complete)
        let record = try HEVCDecoderConfigurationRecord(bytes: description.record)
        #expect(record.arrays.allSatisfy { $0.array_completeness == complete })
        #expect(record.serialized() == description.record)
        #expect(description.record[23] == (complete ? 0xA0 : 0x20))
        let parsed = try FormatDescription(hvcC: description.record)
        #expect(parsed.parameterSets == description.parameterSets)
    }

    @Test("CONFORMANCE 14: a record with zero arrays parses; a description needs VPS, SPS and PPS")
    func zeroArrays() throws {
        var record = try HEVCDecoderConfigurationRecord(parameterSets: [hevcVPS(), Self.sps(), hevcPPS()])
        record.arrays = []
        let bytes = record.serialized()
        #expect(bytes.count == 23)
        #expect(bytes[22] == 0)
        let parsed = try HEVCDecoderConfigurationRecord(bytes: bytes)
        #expect(parsed.arrays.isEmpty)
        #expect(parsed.serialized() == bytes)
        do {
            _ = try FormatDescription(hvcC: bytes)
            Issue.record("no parameter sets")
        } catch {
            #expect(error.code == .invalidData)
            #expect(error.message.contains("0 VPS, 0 SPS and 0 PPS"))
        }
    }

    @Test("CONFORMANCE 14: general_profile_space is the top two bits", arguments: 0...3)
    func profileSpace(space: Int) throws {
        let ptl = PTL(profileSpace: space, tier: 1, profileIDC: 2, level: 120)
        let record = try HEVCDecoderConfigurationRecord(parameterSets: [
            hevcVPS(ptl: ptl), Self.sps { $0.ptl = ptl }, hevcPPS(),
        ])
        let bytes = record.serialized()
        #expect(bytes[1] == UInt8(space << 6 | 1 << 5 | 2))
        let parsed = try HEVCDecoderConfigurationRecord(bytes: bytes)
        #expect(parsed.general_profile_space == space)
        #expect(parsed.general_tier_flag == 1)
        #expect(parsed.general_profile_idc == 2)
    }

    /// CONFORMANCE 15, field by field, with the values FFmpeg's hvcC writer
    /// (libavformat/hevc.c) derives from the same parameter sets.
    @Test("CONFORMANCE 15: tier and level maxima, ANDed flags, profile maximum")
    func profileTierLevelMerge() throws {
        let vpsPTL = PTL(
            tier: 0, profileIDC: 1, compatibility: 0x6000_0000, constraints: 0xB000_0000_0000, level: 153)
        let spsPTL = PTL(tier: 1, profileIDC: 2, compatibility: 0x2000_0001, constraints: 0x9000_0000_0001, level: 93)
        let record = try HEVCDecoderConfigurationRecord(parameterSets: [
            hevcVPS(ptl: vpsPTL), Self.sps { $0.ptl = spsPTL }, hevcPPS(),
        ])
        #expect(record.general_tier_flag == 1)
        #expect(record.general_level_idc == 93)  // the level of the highest tier
        #expect(record.general_profile_idc == 2)
        #expect(record.general_profile_compatibility_flags == 0x2000_0000)
        #expect(record.general_constraint_indicator_flags == 0x9000_0000_0000)

        let sameTier = try HEVCDecoderConfigurationRecord(parameterSets: [
            hevcVPS(ptl: PTL(level: 90)), Self.sps { $0.ptl = PTL(level: 120) }, hevcPPS(),
        ])
        #expect(sameTier.general_level_idc == 120)
        #expect(sameTier.general_tier_flag == 0)
    }

    @Test(
        "CONFORMANCE 15: parallelismType from the PPS when the VUI gives min_spatial_segmentation_idc",
        arguments: [
            (false, false, 1), (true, false, 2), (false, true, 3), (true, true, 0),
        ])
    func parallelism(tiles: Bool, wpp: Bool, expected: Int) throws {
        let withVUI = try HEVCDecoderConfigurationRecord(parameterSets: [
            hevcVPS(),
            Self.sps {
                $0.vui = true
                $0.minSpatialSegmentation = 12
            },
            hevcPPS(tiles: tiles, wpp: wpp),
        ])
        #expect(withVUI.min_spatial_segmentation_idc == 12)
        #expect(withVUI.parallelismType == expected)
        #expect(withVUI.serialized()[13...15] == [0xF0, 12, 0xFC | UInt8(expected)])

        // Without bitstream_restriction the segmentation is unknown (0) and so
        // is the parallelism type, whatever the PPS says.
        let withoutVUI = try HEVCDecoderConfigurationRecord(parameterSets: [
            hevcVPS(), Self.sps(), hevcPPS(tiles: tiles, wpp: wpp),
        ])
        #expect(withoutVUI.min_spatial_segmentation_idc == 0)
        #expect(withoutVUI.parallelismType == 0)
    }

    @Test("CONFORMANCE 15: minimum segmentation over SPSs; last PPS sets the parallelism")
    func severalSets() throws {
        let record = try HEVCDecoderConfigurationRecord(parameterSets: [
            hevcVPS(),
            Self.sps {
                $0.vui = true
                $0.minSpatialSegmentation = 40
            },
            Self.sps {
                $0.id = 1
                $0.vui = true
                $0.minSpatialSegmentation = 30
            },
            Self.sps { $0.id = 2 },
            hevcPPS(id: 0, wpp: true), hevcPPS(id: 1, tiles: true),
        ])
        #expect(record.min_spatial_segmentation_idc == 30)
        #expect(record.parallelismType == 2)
    }

    @Test(
        "CONFORMANCE 15: chroma format, bit depths, temporal layers, nesting, lengthSizeMinusOne 3",
        arguments: [(0, 1, 0, true), (2, 2, 2, false), (6, 3, 4, true)])
    func sequenceFields(subLayers: Int, chroma: Int, depth: Int, nested: Bool) throws {
        let record = try HEVCDecoderConfigurationRecord(parameterSets: [
            hevcVPS(subLayersMinus1: subLayers),
            Self.sps {
                $0.subLayersMinus1 = subLayers
                $0.temporalIdNesting = nested
                $0.chroma_format_idc = chroma
                $0.bitDepthLumaMinus8 = depth
                $0.bitDepthChromaMinus8 = depth
            },
            hevcPPS(),
        ])
        #expect(record.chromaFormat == chroma)
        #expect(record.bitDepthLumaMinus8 == depth && record.bitDepthChromaMinus8 == depth)
        #expect(record.numTemporalLayers == subLayers + 1)
        #expect(record.temporalIdNested == (nested ? 1 : 0))
        #expect(record.lengthSizeMinusOne == 3)
        #expect(record.avgFrameRate == 0 && record.constantFrameRate == 0)
        let bytes = record.serialized()
        #expect(bytes[21] == UInt8((subLayers + 1) << 3 | (nested ? 1 : 0) << 2 | 3))
        #expect(bytes[16] == 0xFC | UInt8(chroma))
    }

    @Test("CONFORMANCE 3: reserved bits set and unset parse identically")
    func reservedBits() throws {
        let ones = try HEVCDecoderConfigurationRecord(parameterSets: [hevcVPS(), Self.sps(), hevcPPS()]).serialized()
        var zeros = ones
        zeros[13] &= 0x0F
        zeros[15] &= 0b11
        zeros[16] &= 0b11
        zeros[17] &= 0b111
        zeros[18] &= 0b111
        #expect(zeros != ones)
        let a = try HEVCDecoderConfigurationRecord(bytes: ones)
        let b = try HEVCDecoderConfigurationRecord(bytes: zeros)
        #expect(a.serialized() == ones)
        #expect(b.serialized() == zeros)
        var normalized = b
        normalized.reservedBits = a.reservedBits
        #expect(normalized == a)
        let da = try FormatDescription(hvcC: ones)
        let db = try FormatDescription(hvcC: zeros)
        #expect(da.parameterSets == db.parameterSets && da.width == db.width && da.profile == db.profile)
    }

    @Test("lengthSizeMinusOne 2 is rejected; 0, 1 and 3 are accepted")
    func lengthSizes() throws {
        let record = try FormatDescription(hevcParameterSets: [hevcVPS(), Self.sps(), hevcPPS()]).record
        for (minusOne, accepted) in [(0, true), (1, true), (2, false), (3, true)] {
            var bytes = record
            bytes[21] = bytes[21] & 0xFC | UInt8(minusOne)
            if accepted {
                #expect(try FormatDescription(hvcC: bytes).nalUnitHeaderLength == minusOne + 1)
            } else {
                #expect(throws: MediaError.self) { try FormatDescription(hvcC: bytes) }
            }
        }
    }

    @Test("truncations and corruptions of a record never crash")
    func fuzzed() throws {
        let good = try FormatDescription(hevcParameterSets: [hevcVPS(), Self.sps(), hevcPPS(), hevcPrefixSEI()]).record
        for bytes in mutations(of: good, count: 400) {
            if let record = try? HEVCDecoderConfigurationRecord(bytes: bytes) {
                #expect(record.serialized() == bytes)
            }
            _ = try? FormatDescription(hvcC: bytes)
        }
        do {
            _ = try HEVCDecoderConfigurationRecord(bytes: Array(good.prefix(30)))
            Issue.record("truncated")
        } catch {
            #expect(error.message.contains("offset"))
        }
    }
}
