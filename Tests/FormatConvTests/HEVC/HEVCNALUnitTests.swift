import FormatConv
import Testing

struct HEVCNALUnitTests {
    struct HeaderCase: Sendable, CustomStringConvertible {
        var bytes: [UInt8]
        var type: UInt8
        var name: String
        var layerId: Int
        var temporalId: Int
        var keyframe: Bool
        var description: String { hex(bytes) }
    }

    static let headers: [HeaderCase] = [
        HeaderCase(bytes: [0x40, 0x01], type: 32, name: "VPS", layerId: 0, temporalId: 0, keyframe: false),
        HeaderCase(bytes: [0x42, 0x01], type: 33, name: "SPS", layerId: 0, temporalId: 0, keyframe: false),
        HeaderCase(bytes: [0x44, 0x01], type: 34, name: "PPS", layerId: 0, temporalId: 0, keyframe: false),
        HeaderCase(bytes: [0x26, 0x01], type: 19, name: "IDR_W_RADL", layerId: 0, temporalId: 0, keyframe: true),
        HeaderCase(bytes: [0x28, 0x01], type: 20, name: "IDR_N_LP", layerId: 0, temporalId: 0, keyframe: true),
        HeaderCase(bytes: [0x2A, 0x01], type: 21, name: "CRA_NUT", layerId: 0, temporalId: 0, keyframe: true),
        HeaderCase(bytes: [0x20, 0x01], type: 16, name: "BLA_W_LP", layerId: 0, temporalId: 0, keyframe: true),
        HeaderCase(bytes: [0x10, 0x01], type: 8, name: "RASL_N", layerId: 0, temporalId: 0, keyframe: false),
        HeaderCase(bytes: [0x02, 0x03], type: 1, name: "TRAIL_R", layerId: 0, temporalId: 2, keyframe: false),
        HeaderCase(bytes: [0x4E, 0x01], type: 39, name: "PREFIX_SEI", layerId: 0, temporalId: 0, keyframe: false),
        HeaderCase(bytes: [0x50, 0x01], type: 40, name: "SUFFIX_SEI", layerId: 0, temporalId: 0, keyframe: false),
        HeaderCase(bytes: [0x46, 0x01], type: 35, name: "AUD", layerId: 0, temporalId: 0, keyframe: false),
        // nuh_layer_id spans the low bit of byte 0 and the high 5 bits of byte 1.
        HeaderCase(bytes: [0x27, 0x09], type: 19, name: "IDR_W_RADL", layerId: 33, temporalId: 0, keyframe: false),
        HeaderCase(bytes: [0x02, 0x0A], type: 1, name: "TRAIL_R", layerId: 1, temporalId: 1, keyframe: false),
        // forbidden_zero_bit set: the type is still the 6 bits after it (CONFORMANCE 13).
        HeaderCase(bytes: [0xA6, 0x01], type: 19, name: "IDR_W_RADL", layerId: 0, temporalId: 0, keyframe: true),
        HeaderCase(bytes: [0x7E, 0x01], type: 63, name: "UNSPEC63", layerId: 0, temporalId: 0, keyframe: false),
    ]

    @Test(arguments: headers)
    func headerFields(_ c: HeaderCase) {
        let header = HEVCNALUnitHeader(c.bytes[0], c.bytes[1])
        #expect(header.type.rawValue == c.type)
        #expect(header.type.rawValue == (c.bytes[0] >> 1) & 0x3F)
        #expect(header.type.name == c.name)
        #expect(header.layerId == c.layerId)
        #expect(header.temporalId == c.temporalId)
        #expect(header.isKeyframe == c.keyframe)
        #expect(header.forbiddenZeroBit == (c.bytes[0] & 0x80 != 0))
        let rebuilt = HEVCNALUnitHeader(
            type: header.type, layerId: header.layerId, temporalIdPlus1: header.temporalIdPlus1)
        #expect([rebuilt.byte0, rebuilt.byte1] == [c.bytes[0] & 0x7F, c.bytes[1]])
    }

    /// CONFORMANCE 12: IRAP types 16–23 are keyframes, nothing else is.
    @Test func irapTypesAreKeyframes() {
        for raw in UInt8(0)...63 {
            let type = HEVCNALUnitType(rawValue: raw)
            #expect(type.isIRAP == (16...23).contains(raw), "type \(raw)")
            #expect(HEVCNALUnitHeader(type: type).isKeyframe == (16...23).contains(raw), "type \(raw)")
            #expect(type.isVCL == (raw < 32), "type \(raw)")
        }
    }

    /// H.265 3.152: sub-layer non-reference pictures are the even types 0–14.
    @Test func subLayerNonReferenceTypes() {
        let nonReference = (UInt8(0)...63).filter { HEVCNALUnitType(rawValue: $0).isSubLayerNonReference }
        #expect(nonReference == [0, 2, 4, 6, 8, 10, 12, 14])
        #expect(!HEVCNALUnitHeader(type: .trailN).isReferencedByOthers)
        #expect(HEVCNALUnitHeader(type: .trailR).isReferencedByOthers)
    }

    /// H.265 7.4.2.4.4: types that start an access unit after a VCL NAL unit.
    @Test func accessUnitStartingTypes() {
        let starting = (UInt8(0)...63).filter { HEVCNALUnitType(rawValue: $0).startsAccessUnitAfterVCL }
        #expect(starting == [32, 33, 34, 35, 39, 41, 42, 43, 44] + Array(48...55))
    }

    @Test func everyTypeHasAName() {
        for raw in UInt8(0)...63 { #expect(!HEVCNALUnitType(rawValue: raw).name.isEmpty) }
        #expect(HEVCNALUnitType(rawValue: 0xFF).rawValue == 63)
    }
}
