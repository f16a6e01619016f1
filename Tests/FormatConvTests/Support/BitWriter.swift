import FormatConv

/// Writes syntax elements MSB-first, the inverse of FormatConv's BitReader, so
/// tests can build parameter sets field by field.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var bitCount = 0

    mutating func u(_ count: Int, _ value: UInt64) {
        for shift in stride(from: count - 1, through: 0, by: -1) {
            bit((value >> UInt64(shift)) & 1 == 1)
        }
    }

    mutating func u(_ count: Int, _ value: Int) { u(count, UInt64(value)) }

    mutating func flag(_ value: Bool) { bit(value) }

    mutating func ue(_ value: Int) {
        let codeNum = UInt64(value) + 1
        let length = 64 - codeNum.leadingZeroBitCount
        u(length - 1, 0)
        u(length, codeNum)
    }

    mutating func se(_ value: Int) { ue(value > 0 ? 2 * value - 1 : -2 * value) }

    /// rbsp_trailing_bits(): a 1 and zero bits to the byte boundary.
    mutating func trailingBits() {
        bit(true)
        while bitCount % 8 != 0 { bit(false) }
    }

    private mutating func bit(_ value: Bool) {
        if bitCount % 8 == 0 { bytes.append(0) }
        if value { bytes[bytes.count - 1] |= 0x80 >> UInt8(bitCount % 8) }
        bitCount += 1
    }

    /// A NAL unit: `header` followed by the escaped RBSP (trailing bits added).
    func nal(header: [UInt8]) -> [UInt8] {
        var finished = self
        finished.trailingBits()
        return header + RBSP.escape(finished.bytes)
    }
}
