import MediaCore
import TestSupport
import Testing

@testable import MediaIO

@Suite struct Y4MHeaderTests {
    @Test(arguments: [
        ("C420jpeg", PixelFormat.i420), ("C420paldv", .i420), ("C420mpeg2", .i420), ("C420", .i420),
        ("C420p10", .i010),
    ])
    func colourSpaces(tag: String, format: PixelFormat) throws {
        let header = try Y4MHeader(parsing: "YUV4MPEG2 W6 H4 F25:1 \(tag)")
        #expect(header.pixelFormat == format)
        #expect(header.colorSpaceTag == String(tag.dropFirst()))
        #expect(header.frameByteCount == Y4MTestData.frameBytes(width: 6, height: 4, tenBit: format == .i010))
    }

    @Test func everyTagParsed() throws {
        let header = try Y4MHeader(parsing: "YUV4MPEG2 C420mpeg2 H5 W7 It A10:11 F30000:1001 XYSCSS=420MPEG2 Xnote")
        #expect(header.width == 7 && header.height == 5)
        #expect(header.frameRate == (30000, 1001))
        #expect(header.interlacing == .topFieldFirst)
        #expect(header.pixelAspect?.numerator == 10 && header.pixelAspect?.denominator == 11)
        #expect(header.comments == ["YSCSS=420MPEG2", "note"])
        #expect(header.tagOrder == ["C", "H", "W", "I", "A", "F", "X", "X"])
        #expect(header.frameDuration == MediaTime(value: 1001, timescale: 30000))
        #expect(try header.serialized() == "YUV4MPEG2 C420mpeg2 H5 W7 It A10:11 F30000:1001 XYSCSS=420MPEG2 Xnote\n")
    }

    @Test(arguments: [
        ("p", Y4MHeader.Interlacing.progressive), ("t", .topFieldFirst), ("b", .bottomFieldFirst), ("m", .mixed),
    ])
    func interlacing(letter: String, mode: Y4MHeader.Interlacing) throws {
        #expect(try Y4MHeader(parsing: "YUV4MPEG2 W2 H2 I\(letter)").interlacing == mode)
    }

    @Test func absentTagsStayAbsent() throws {
        let header = try Y4MHeader(parsing: "YUV4MPEG2 W2 H2")
        #expect(header.pixelFormat == .i420 && header.colorSpaceTag == nil)
        #expect(header.interlacing == nil && header.pixelAspect == nil)
        #expect(header.frameRate == (0, 0))
        #expect(!header.frameDuration.isValid)
        #expect(try header.serialized() == "YUV4MPEG2 W2 H2\n")
    }

    @Test func headerMadeInCodeUsesTheUsualOrder() throws {
        var header = Y4MHeader(width: 320, height: 240, frameRate: (24000, 1001), pixelFormat: .i010)
        header.interlacing = .progressive
        header.pixelAspect = (1, 1)
        header.comments = ["COLORRANGE=LIMITED"]
        #expect(try header.serialized() == "YUV4MPEG2 W320 H240 F24000:1001 Ip A1:1 C420p10 XCOLORRANGE=LIMITED\n")
        #expect(try Y4MHeader(width: 2, height: 2).serialized() == "YUV4MPEG2 W2 H2 F30:1\n")
    }

    /// Colour spaces no pixel format covers are refused, naming the tag.
    @Test(arguments: ["C444alpha", "Cmono16", "C420p9", "C422p14", "C444p16", "C411", "Cxyz"])
    func unsupportedColourSpaces(tag: String) {
        #expect {
            _ = try Y4MHeader(parsing: "YUV4MPEG2 W4 H4 \(tag)")
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .unsupported && error.message.contains("\"\(tag)\"")
        }
    }

    @Test(arguments: [
        ("YUV4MPEG2 W4 H4 Z12", MediaError.Code.unsupported, "Z12"),
        ("YUV4MPEG2 W4 H4 Q", .unsupported, "Q"),
        ("YUV4MPEG2 W0 H4", .invalidData, "W0"),
        ("YUV4MPEG2 W4 H99999", .invalidData, "H99999"),
        ("YUV4MPEG2 Wx H4", .invalidData, "Wx"),
        ("YUV4MPEG2 W4 H4 F30:0", .invalidData, "F30:0"),
        ("YUV4MPEG2 W4 H4 Fabc", .invalidData, "Fabc"),
        ("YUV4MPEG2 W4 H4 A-1:1", .invalidData, "A-1:1"),
        ("YUV4MPEG2 W4 H4 Iq", .invalidData, "Iq"),
        ("YUV4MPEG2 W4 H4 W6", .invalidData, "W"),
        ("YUV4MPEG2 H4", .invalidData, "W"),
        ("YUV4MPEG2 W4", .invalidData, "H"),
        ("YUV4MPEG W4 H4", .invalidData, "YUV4MPEG2"),
        ("", .invalidData, "YUV4MPEG2"),
    ])
    func malformedHeaders(line: String, code: MediaError.Code, named: String) {
        #expect {
            _ = try Y4MHeader(parsing: line)
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == code && error.message.contains(named)
        }
    }

    @Test func serializationRejectsFormatsY4MCannotCarry() {
        for format in [PixelFormat.nv12, .p010, .bgra] {
            #expect(throws: MediaError.self) { try Y4MHeader(width: 4, height: 4, pixelFormat: format).serialized() }
        }
        #expect(throws: MediaError.self) {
            try Y4MHeader(width: 4, height: 4, pixelFormat: .i420, colorSpaceTag: "420p10").serialized()
        }
        #expect(throws: MediaError.self) {
            try Y4MHeader(width: 4, height: 4, pixelFormat: .i010, colorSpaceTag: "420jpeg").serialized()
        }
    }

    @Test func serializationRejectsSpacesInValues() {
        #expect {
            _ = try Y4MHeader(width: 4, height: 4, comments: ["two words"]).serialized()
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .invalidArgument && error.message.contains("two words")
        }
    }

    @Test func equalityIgnoresTagOrder() throws {
        let a = try Y4MHeader(parsing: "YUV4MPEG2 W4 H2 F30:1 A1:1")
        let b = try Y4MHeader(parsing: "YUV4MPEG2 A1:1 F30:1 H2 W4")
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != (try Y4MHeader(parsing: "YUV4MPEG2 W4 H2 F30:1 A2:1")))
    }
}
