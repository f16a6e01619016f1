/// Big-endian byte reading and writing for the configuration records
/// (ISO/IEC 14496-15 uses big-endian fields throughout).
struct ByteCursor {
    let bytes: [UInt8]
    let context: String
    private(set) var offset = 0

    init(_ bytes: [UInt8], context: String) {
        self.bytes = bytes
        self.context = context
    }

    var remaining: Int { bytes.count - offset }

    mutating func u8(_ field: String) throws(MediaError) -> UInt8 {
        guard remaining >= 1 else { throw truncated(field, needed: 1) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16(_ field: String) throws(MediaError) -> Int {
        guard remaining >= 2 else { throw truncated(field, needed: 2) }
        defer { offset += 2 }
        return Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
    }

    mutating func uBytes(_ count: Int, _ field: String) throws(MediaError) -> UInt64 {
        guard remaining >= count else { throw truncated(field, needed: count) }
        var value: UInt64 = 0
        for index in offset..<offset + count {
            value = value << 8 | UInt64(bytes[index])
        }
        offset += count
        return value
    }

    mutating func take(_ count: Int, _ field: String) throws(MediaError) -> [UInt8] {
        guard remaining >= count else { throw truncated(field, needed: count) }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }

    func truncated(_ field: String, needed: Int) -> MediaError {
        MediaError.invalidData(
            "\(context): \(field) at offset \(offset) needs \(needed) bytes but only \(remaining) remain "
                + "(record is \(bytes.count) bytes)")
    }
}

extension Array where Element == UInt8 {
    mutating func appendBigEndian(_ value: UInt64, byteCount: Int) {
        for shift in stride(from: (byteCount - 1) * 8, through: 0, by: -8) {
            append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
