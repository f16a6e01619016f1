import FormatConv
import Testing

struct LengthPrefixedTests {
    static let units: [[UInt8]] = [
        [0x67, 0x42, 0x00, 0x1F], [0x68, 0xCE], [0x65] + Array(repeating: 0x88, count: 200),
    ]

    /// CONFORMANCE 1 and 17: sizes 1, 2 and 4 read back what was written.
    @Test(arguments: [1, 2, 4])
    func writeThenRead(_ lengthSize: Int) throws {
        let data = try LengthPrefixed.write(Self.units, lengthSize: lengthSize)
        #expect(data == lengthPrefixed(Self.units, lengthSize: lengthSize))
        #expect(data.count == Self.units.reduce(0) { $0 + lengthSize + $1.count })
        let read = try LengthPrefixed.nalUnits(in: data, lengthSize: lengthSize, codec: .h264)
        #expect(read.map(Array.init) == Self.units)
    }

    /// CONFORMANCE 1: size 3 is rejected like VideoToolbox does, with a clear error.
    @Test func lengthSizeThreeIsRejected() {
        let legacy: [UInt8] = [0, 0, 2, 0x65, 0x88, 0, 0, 1, 0x41]
        let error = #expect(throws: MediaError.self) {
            _ = try LengthPrefixed.nalUnitRanges(in: legacy, lengthSize: 3)
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("length size 3 is not supported") == true)
        #expect(throws: MediaError.self) { _ = try LengthPrefixed.write([[0x65]], lengthSize: 3) }
        #expect(throws: MediaError.self) { _ = try LengthPrefixed.convert([0, 0, 1, 0x65], from: 4, to: 3) }
    }

    /// CONFORMANCE 1: a legacy 3-byte-length sample converts to 4 when asked.
    @Test func legacyThreeByteLengthsConvertToFour() throws {
        let legacy: [UInt8] = [0, 0, 2, 0x65, 0x88, 0, 0, 1, 0x41]
        let converted = try LengthPrefixed.convert(legacy, from: 3, to: 4)
        #expect(converted == [0, 0, 0, 2, 0x65, 0x88, 0, 0, 0, 1, 0x41])
    }

    @Test(arguments: [0, 5, -1, 8])
    func otherSizesAreRejected(_ size: Int) {
        let error = #expect(throws: MediaError.self) { try LengthPrefixed.validate(lengthSize: size) }
        #expect(error?.message.contains("\(size)") == true)
    }

    struct BadCase: Sendable, CustomStringConvertible {
        var name: String
        var data: [UInt8]
        var lengthSize: Int
        var codec: CodecType?
        var messageContains: String
        var description: String { name }
    }

    /// CONFORMANCE 2.
    static let badCases: [BadCase] = [
        BadCase(
            name: "length past the end", data: [0, 0, 0, 2, 0x41, 0x9A, 0, 0, 0, 9, 0x41], lengthSize: 4,
            codec: nil, messageContains: "at offset 6"),
        BadCase(
            name: "length past the end, size 1", data: [3, 0x41], lengthSize: 1, codec: nil,
            messageContains: "at offset 0"),
        BadCase(
            name: "1 dangling byte", data: [0, 0, 0, 1, 0x41, 0], lengthSize: 4, codec: nil,
            messageContains: "at offset 5"),
        BadCase(
            name: "3 dangling bytes", data: [0, 0, 0, 1, 0x41, 0, 0, 0], lengthSize: 4, codec: nil,
            messageContains: "3 dangling byte(s) at offset 5"),
        BadCase(
            name: "1 dangling byte, size 2", data: [0, 1, 0x41, 7], lengthSize: 2, codec: nil,
            messageContains: "at offset 3"),
        BadCase(
            name: "HEVC NAL unit of one byte", data: [0, 0, 0, 2, 0x26, 0x01, 0, 0, 0, 1, 0x26], lengthSize: 4,
            codec: .hevc, messageContains: "at offset 6"),
    ]

    @Test(arguments: badCases)
    func malformedInputNamesTheOffset(_ c: BadCase) {
        let error = #expect(throws: MediaError.self) {
            _ = try LengthPrefixed.nalUnitRanges(in: c.data, lengthSize: c.lengthSize, codec: c.codec)
        }
        #expect(error?.code == .invalidData)
        #expect(error?.message.contains(c.messageContains) == true, "\(error?.message ?? "")")
    }

    /// CONFORMANCE 2: zero-length NAL units are skipped, in reading and converting.
    @Test func zeroLengthNALUnitsAreSkipped() throws {
        let data: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 1, 0x41, 0, 0, 0, 0]
        #expect(try LengthPrefixed.nalUnitRanges(in: data, lengthSize: 4) == [8..<9])
        #expect(try LengthPrefixed.convert(data, from: 4, to: 4) == [0, 0, 0, 1, 0x41])
        #expect(try LengthPrefixed.convert(data, from: 4, to: 1) == [1, 0x41])
    }

    @Test func oneByteNALUnitIsFineForH264() throws {
        #expect(try LengthPrefixed.nalUnitRanges(in: [1, 0x09], lengthSize: 1, codec: .h264) == [1..<2])
    }

    /// A NAL unit longer than a small length field can hold is an error.
    @Test(arguments: [1, 2])
    func tooLongForTheLengthSize(_ size: Int) {
        let unit = [UInt8](repeating: 0x41, count: size == 1 ? 256 : 65536)
        #expect(throws: MediaError.self) { _ = try LengthPrefixed.write([unit], lengthSize: size) }
        let data = lengthPrefixed([unit], lengthSize: 4)
        #expect(throws: MediaError.self) { _ = try LengthPrefixed.convert(data, from: 4, to: size) }
    }

    /// CONFORMANCE 17: converting between every pair of sizes and back is the identity.
    @Test(arguments: [1, 2, 3, 4], [1, 2, 4])
    func conversionRoundTrip(_ source: Int, _ target: Int) throws {
        let data = lengthPrefixed(Self.units, lengthSize: source)
        let converted = try LengthPrefixed.convert(data, from: source, to: target)
        #expect(converted == lengthPrefixed(Self.units, lengthSize: target), "from \(source) to \(target)")
        let back = try LengthPrefixed.convert(converted, from: target, to: source == 3 ? 4 : source)
        #expect(back == lengthPrefixed(Self.units, lengthSize: source == 3 ? 4 : source), "\(source)→\(target)→back")
    }
}
