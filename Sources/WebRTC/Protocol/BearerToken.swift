// Bearer tokens on a WHIP or WHEP endpoint: the `Authorization` field read
// (RFC 6750 §2.1 syntax, as RFC 9725 §4.5 asks) and the constant-time compare.

/// A bearer token as a WHIP or WHEP endpoint takes it: `Authorization:
/// Bearer TOKEN` (RFC 6750 §2.1; RFC 9725 §4.5), the token a `token68`
/// (letters, digits, `-._~+/`, then `=` padding). Comparison takes time
/// that depends on the expected token's length only, never on where the
/// presented one differs.
public enum BearerToken {
    /// Whether `byte` may appear in a token68 before its `=` padding.
    static func isToken68Character(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"),
            UInt8(ascii: "/"):
            return true
        default: return false
        }
    }

    /// Whether `token` is a token68 that an `Authorization: Bearer` field can
    /// carry: at least one character of the token alphabet, then any `=`.
    public static func isValid<Bytes: Collection<UInt8>>(_ token: Bytes) -> Bool {
        let body = token.prefix { isToken68Character($0) }
        return !body.isEmpty && token.dropFirst(body.count).allSatisfy { $0 == UInt8(ascii: "=") }
    }

    /// The token of an `Authorization` field value: the scheme `Bearer` (any
    /// case), one or more spaces, a token68, nothing after it but spaces or
    /// tabs. Nil for any other value (another scheme, no token, a token with
    /// characters outside token68).
    public static func parse(authorization value: String) -> [UInt8]? {
        var bytes = Array(value.utf8)[...]
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        let scheme = Array("bearer".utf8)
        guard bytes.count > scheme.count + 1,
            zip(bytes.prefix(scheme.count), scheme).allSatisfy({ $0 | 0x20 == $1 }),
            bytes[bytes.startIndex + scheme.count] == 0x20
        else { return nil }
        let token = bytes.dropFirst(scheme.count).drop { $0 == 0x20 }
        return isValid(token) ? Array(token) : nil
    }

    /// Whether `presented` equals `expected`, every byte of `expected` looked
    /// at whatever `presented` holds.
    @inline(never)
    public static func matches(_ presented: [UInt8], _ expected: [UInt8]) -> Bool {
        var difference: UInt8 = presented.count == expected.count ? 0 : 1
        for index in expected.indices {
            difference |= expected[index] ^ (index < presented.count ? presented[index] : 0)
        }
        return difference == 0
    }

    /// Whether the request fields carry `expected` as their bearer token;
    /// true when `expected` is nil (no token configured).
    public static func authorizes(_ fields: [String: String], _ expected: [UInt8]?) -> Bool {
        guard let expected else { return true }
        guard let presented = fields["authorization"].flatMap(parse(authorization:)) else { return false }
        return matches(presented, expected)
    }
}
