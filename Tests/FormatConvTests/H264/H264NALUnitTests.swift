import FormatConv
import Testing

struct H264NALUnitTests {
    struct HeaderCase: Sendable, CustomStringConvertible {
        var byte: UInt8
        var forbidden: Bool
        var refIdc: UInt8
        var type: UInt8
        var name: String
        var keyframe: Bool
        var vcl: Bool
        var description: String { "0x\(hex([byte]))" }
    }

    static let headers: [HeaderCase] = [
        HeaderCase(byte: 0x67, forbidden: false, refIdc: 3, type: 7, name: "SPS", keyframe: false, vcl: false),
        HeaderCase(byte: 0x68, forbidden: false, refIdc: 3, type: 8, name: "PPS", keyframe: false, vcl: false),
        HeaderCase(byte: 0x65, forbidden: false, refIdc: 3, type: 5, name: "IDR", keyframe: true, vcl: true),
        HeaderCase(byte: 0x41, forbidden: false, refIdc: 2, type: 1, name: "non-IDR slice", keyframe: false, vcl: true),
        HeaderCase(byte: 0x01, forbidden: false, refIdc: 0, type: 1, name: "non-IDR slice", keyframe: false, vcl: true),
        HeaderCase(byte: 0x06, forbidden: false, refIdc: 0, type: 6, name: "SEI", keyframe: false, vcl: false),
        HeaderCase(byte: 0x09, forbidden: false, refIdc: 0, type: 9, name: "AUD", keyframe: false, vcl: false),
        HeaderCase(byte: 0x0C, forbidden: false, refIdc: 0, type: 12, name: "filler data", keyframe: false, vcl: false),
        HeaderCase(
            byte: 0x6D, forbidden: false, refIdc: 3, type: 13, name: "SPS extension", keyframe: false, vcl: false),
        HeaderCase(
            byte: 0x0A, forbidden: false, refIdc: 0, type: 10, name: "end of sequence", keyframe: false, vcl: false),
        HeaderCase(
            byte: 0x0B, forbidden: false, refIdc: 0, type: 11, name: "end of stream", keyframe: false, vcl: false),
        HeaderCase(
            byte: 0x74, forbidden: false, refIdc: 3, type: 20, name: "slice extension", keyframe: false, vcl: false),
        HeaderCase(byte: 0xE5, forbidden: true, refIdc: 3, type: 5, name: "IDR", keyframe: true, vcl: true),
        HeaderCase(byte: 0x17, forbidden: false, refIdc: 0, type: 23, name: "reserved", keyframe: false, vcl: false),
        HeaderCase(byte: 0x1F, forbidden: false, refIdc: 0, type: 31, name: "unspecified", keyframe: false, vcl: false),
    ]

    @Test(arguments: headers)
    func headerFields(_ c: HeaderCase) {
        let header = H264NALUnitHeader(c.byte)
        #expect(header.forbiddenZeroBit == c.forbidden)
        #expect(header.nalRefIdc == c.refIdc)
        #expect(header.type.rawValue == c.type)
        #expect(header.type.name == c.name)
        #expect(header.isKeyframe == c.keyframe)
        #expect(header.type.isVCL == c.vcl)
        #expect(header.isReferencedByOthers == (c.refIdc != 0))
        #expect(H264NALUnitHeader(nalRefIdc: c.refIdc, type: header.type).byte == c.byte & 0x7F)
    }

    @Test func everyTypeHasANameAndOnlyIDRIsAKeyframe() {
        for raw in UInt8(0)...31 {
            let type = H264NALUnitType(rawValue: raw)
            #expect(!type.name.isEmpty)
            #expect((type == .idr) == H264NALUnitHeader(nalRefIdc: 3, type: type).isKeyframe, "type \(raw)")
            #expect(type.isParameterSet == [7, 8, 13].contains(raw), "type \(raw)")
        }
    }

    /// H.264 7.4.1.2.3: AUD, SPS, PPS, SEI and types 14–18 start an access unit
    /// after a VCL NAL unit; end of sequence/stream, filler and SPS extension do not.
    @Test func accessUnitStartingTypes() {
        let starting = (UInt8(0)...31).filter { H264NALUnitType(rawValue: $0).startsAccessUnitAfterVCL }
        #expect(starting == [6, 7, 8, 9, 14, 15, 16, 17, 18])
    }

    @Test func typeIsMaskedToFiveBits() {
        #expect(H264NALUnitType(rawValue: 0xE7) == .sps)
    }
}
