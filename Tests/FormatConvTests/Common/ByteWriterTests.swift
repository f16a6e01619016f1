import Testing

@testable import FormatConv

struct ByteWriterTests {
    @Test("big-endian fields round-trip through appendBigEndian and ByteCursor", arguments: [1, 2, 4, 6, 8])
    func roundTrip(width: Int) throws {
        let value: UInt64 = width == 8 ? 0x0123_4567_89AB_CDEF : (1 << UInt64(8 * width - 1)) | 0x5A
        var bytes: [UInt8] = []
        bytes.appendBigEndian(value, byteCount: width)
        #expect(bytes.count == width)
        var cursor = ByteCursor(bytes, context: "test")
        #expect(try cursor.uBytes(width, "field") == value)
        #expect(cursor.remaining == 0)
    }

    @Test("reading past the end names the field, offset and sizes")
    func truncated() {
        var cursor = ByteCursor([1, 2, 3], context: "hvcC")
        _ = try? cursor.u16("first")
        do {
            _ = try cursor.u16("numNalus[0]")
            Issue.record("only one byte is left")
        } catch {
            #expect(error.code == .invalidData)
            #expect(error.message.contains("hvcC: numNalus[0] at offset 2 needs 2 bytes but only 1 remain"))
        }
    }
}
