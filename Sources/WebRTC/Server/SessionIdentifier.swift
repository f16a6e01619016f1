// Session ids: 128 bits from the system's CSPRNG, as hex.

/// The id of a WHEP or WHIP session, the last segment of its session URL:
/// 128 bits from `SystemRandomNumberGenerator` (on Linux the standard
/// library reads `getrandom(2)`, the kernel's CSPRNG) as 32 lowercase
/// hexadecimal digits, so that the URL cannot be guessed.
enum SessionIdentifier {
    /// A new id: 128 random bits as 32 hexadecimal digits.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        let words = [generator.next() as UInt64, generator.next() as UInt64]
        return String(words.flatMap { word in (0..<16).map { digits[Int((word >> (60 - 4 * UInt64($0))) & 15)] } })
    }
}
