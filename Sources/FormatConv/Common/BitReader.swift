/// Reads syntax elements MSB-first from an RBSP (emulation-prevention bytes
/// already removed): fixed-width `u(n)`, `ue(v)` and `se(v)` exp-Golomb codes
/// (H.264 7.2 and 9.1, H.265 9.2).
///
/// Like dav1d's `GetBits`, the reader keeps a sticky error flag instead of
/// failing each read: a read past the end returns zeros and sets ``overrun``,
/// and so does an exp-Golomb code with more than 31 leading zero bits. A parser
/// reads its fields in spec order, range-checks each value right after reading
/// it with ``check(_:_:_:)`` (or reads and checks in one step with
/// ``ue(_:in:)`` and ``se(_:in:)``), and calls ``finish(after:)`` once at the end.
public struct BitReader: Sendable {
    /// What is being parsed, for error messages ("H.264 SPS").
    public let context: String
    private let bytes: [UInt8]
    /// The position of the next bit to read, counted from the first byte.
    public private(set) var bitPosition: Int = 0
    /// Set once a read ran past the end or an exp-Golomb code was too long.
    public private(set) var overrun = false
    /// Values out of range in fields decoding does not need, read with
    /// ``ue(_:tolerating:)`` and accepted (clamped), one message each.
    public private(set) var warnings: [String] = []

    /// A reader over `rbsp`, which must already be free of emulation-prevention bytes.
    public init(rbsp: [UInt8], context: String) {
        self.bytes = rbsp
        self.context = context
    }

    /// The number of bits not yet read (0 after an overrun).
    public var bitsLeft: Int { overrun ? 0 : bytes.count * 8 - bitPosition }

    /// Reads one bit, `u(1)`.
    public mutating func flag() -> Bool { bits(1) != 0 }

    /// Reads `count` bits (0...64) as an unsigned number, `u(n)`.
    public mutating func bits(_ count: Int) -> UInt64 {
        precondition(count >= 0 && count <= 64, "BitReader reads 0...64 bits at a time")
        guard count > 0 else { return 0 }
        guard !overrun, bitPosition + count <= bytes.count * 8 else {
            overrun = true
            bitPosition = bytes.count * 8
            return 0
        }
        var value: UInt64 = 0
        var remaining = count
        while remaining > 0 {
            let byte = bytes[bitPosition >> 3]
            let offset = bitPosition & 7
            let available = 8 - offset
            let take = min(available, remaining)
            let shifted = (UInt64(byte) >> UInt64(available - take)) & ((1 << UInt64(take)) - 1)
            value = (value << UInt64(take)) | shifted
            remaining -= take
            bitPosition += take
        }
        return value
    }

    /// Reads `count` bits (0...32) as an `Int`.
    public mutating func u(_ count: Int) -> Int {
        precondition(count <= 32, "use bits(_:) for fields wider than 32 bits")
        return Int(bits(count))
    }

    /// Skips `count` bits.
    public mutating func skip(_ count: Int) {
        var left = count
        while left > 0 {
            let step = min(left, 64)
            _ = bits(step)
            left -= step
        }
    }

    /// Reads an unsigned exp-Golomb code, `ue(v)` (H.264 9.1): 0...2³²−2.
    public mutating func ue() -> Int {
        var leadingZeroBits = 0
        while !overrun && !flag() {
            leadingZeroBits += 1
            if leadingZeroBits > 31 {
                overrun = true
                return 0
            }
        }
        if overrun { return 0 }
        return (1 << leadingZeroBits) - 1 + Int(bits(leadingZeroBits))
    }

    /// Reads a signed exp-Golomb code, `se(v)` (H.264 9.1.1): k ↦ (−1)^(k+1) ⌈k÷2⌉.
    public mutating func se() -> Int {
        let codeNum = ue()
        return codeNum & 1 == 1 ? (codeNum + 1) / 2 : -(codeNum / 2)
    }

    /// Reads `ue(v)`, the syntax element `name`, and range-checks it with
    /// ``check(_:_:_:)`` before returning it.
    public mutating func ue(_ name: String, in range: ClosedRange<Int>) throws(MediaError) -> Int {
        let value = ue()
        try check(value, range, name)
        return value
    }

    /// Reads `ue(v)`, the syntax element `name`, whose valid values
    /// `lower...upper` are computed from fields read before it. When those
    /// fields leave no valid value (`upper < lower`), the error says so; a
    /// `ClosedRange` built from such bounds would trap instead. Every bound that
    /// depends on parsed data goes through this form.
    public mutating func ue(_ name: String, from lower: Int, through upper: Int) throws(MediaError) -> Int {
        let value = ue()
        try check(value, from: lower, through: upper, name)
        return value
    }

    /// Reads `ue(v)`, the syntax element `name`, a field decoding does not
    /// need (VUI bitstream restrictions, chroma sample location): a value
    /// outside `range` is accepted as FFmpeg accepts it, clamped into the range,
    /// and recorded in ``warnings``; only a truncated read throws.
    public mutating func ue(_ name: String, tolerating range: ClosedRange<Int>) throws(MediaError) -> Int {
        let value = ue()
        if overrun { throw truncated(at: name) }
        guard range.contains(value) else {
            warnings.append(
                "\(context): \(name) = \(value) is out of range \(range.lowerBound)...\(range.upperBound); "
                    + "accepted as \(min(max(value, range.lowerBound), range.upperBound)) (decoding does not use it)")
            return min(max(value, range.lowerBound), range.upperBound)
        }
        return value
    }

    /// Reads `se(v)`, the syntax element `name`, and range-checks it with
    /// ``check(_:_:_:)`` before returning it.
    public mutating func se(_ name: String, in range: ClosedRange<Int>) throws(MediaError) -> Int {
        let value = se()
        try check(value, range, name)
        return value
    }

    /// Throws when `value`, the syntax element `name` just read, lies outside
    /// `range`. When the reader has already run past the end, the error says the
    /// data is truncated instead (the value read is then meaningless).
    public func check(_ value: Int, _ range: ClosedRange<Int>, _ name: String) throws(MediaError) {
        if overrun { throw truncated(at: name) }
        guard range.contains(value) else {
            throw MediaError.invalidData(
                "\(context): \(name) = \(value) is out of range \(range.lowerBound)...\(range.upperBound) "
                    + "(before bit \(bitPosition))")
        }
    }

    /// Throws when `value`, the syntax element `name` just read, lies outside
    /// `lower...upper`, bounds computed from parsed data that may leave no
    /// valid value at all (`upper < lower`), which is reported, never trapped on.
    public func check(_ value: Int, from lower: Int, through upper: Int, _ name: String) throws(MediaError) {
        if overrun { throw truncated(at: name) }
        guard lower <= upper else {
            throw MediaError.invalidData(
                "\(context): \(name) = \(value) has no valid value: the fields before it allow "
                    + "\(lower)...\(upper), an empty range (before bit \(bitPosition))")
        }
        try check(value, lower...upper, name)
    }

    /// Throws when any read so far ran past the end of the data.
    public func finish(after lastField: String? = nil) throws(MediaError) {
        if overrun { throw truncated(at: lastField) }
    }

    private func truncated(at name: String?) -> MediaError {
        let place = name.map { " while reading \($0)" } ?? ""
        return MediaError.invalidData(
            "\(context): truncated\(place): the data ends after \(bytes.count) bytes (or an exp-Golomb code is "
                + "longer than 32 bits)")
    }
}

/// The first bits of a slice header, read without allocating: up to 24
/// escaped bytes are unescaped (H.264 7.4.1, H.265 7.4.2) into 192 bits
/// held in registers. Reads past the end set ``overrun`` and return 0, as
/// ``BitReader`` does.
struct SliceHeaderBits {
    /// The unescaped bits, most significant first.
    private var word0: UInt64 = 0
    private var word1: UInt64 = 0
    private var word2: UInt64 = 0
    /// How many bits were unescaped.
    private(set) var bitCount = 0
    private var position = 0
    private(set) var overrun = false

    init(_ escaped: UnsafeRawBufferPointer) {
        var count = 0
        var zeros = 0
        var current: UInt64 = 0
        for byte in escaped.prefix(24) {
            // An emulation-prevention byte: `03` after two zero bytes.
            if zeros >= 2 && byte == 0x03 {
                zeros = 0
                continue
            }
            current = current << 8 | UInt64(byte)
            count += 1
            if count & 7 == 0 {
                store(current, at: count >> 3 - 1)
                current = 0
            }
            zeros = byte == 0 ? zeros + 1 : 0
        }
        if count & 7 != 0 { store(current << UInt64(8 * (8 - count & 7)), at: count >> 3) }
        bitCount = 8 * count
    }

    private mutating func store(_ value: UInt64, at index: Int) {
        switch index {
        case 0: word0 = value
        case 1: word1 = value
        default: word2 = value
        }
    }

    private func word(_ index: Int) -> UInt64 {
        switch index {
        case 0: word0
        case 1: word1
        case 2: word2
        default: 0
        }
    }

    /// The 64 bits from the current position, zeros past the end.
    private func window() -> UInt64 {
        let index = position >> 6
        let offset = UInt64(position & 63)
        let high = word(index) << offset
        return offset == 0 ? high : high | word(index + 1) >> (64 - offset)
    }

    /// `u(n)` for n in 0...32.
    mutating func bits(_ count: Int) -> UInt64 {
        guard count > 0 else { return 0 }
        guard !overrun, position + count <= bitCount else {
            overrun = true
            position = bitCount
            return 0
        }
        let value = window() >> UInt64(64 - count)
        position += count
        return value
    }

    mutating func flag() -> Bool { bits(1) != 0 }

    /// `ue(v)`; more than 31 leading zero bits, or no 1 bit before the end,
    /// are an overrun (0); a suffix cut short is an overrun too, with the
    /// value of its prefix — what ``BitReader/ue()`` returns.
    mutating func ue() -> Int {
        guard !overrun else { return 0 }
        let leadingZeroBits = window().leadingZeroBitCount
        guard leadingZeroBits <= 31, position + leadingZeroBits + 1 <= bitCount else {
            overrun = true
            position = bitCount
            return 0
        }
        position += leadingZeroBits + 1
        return (1 << leadingZeroBits) - 1 + Int(bits(leadingZeroBits))
    }
}
