/// HMAC-SHA1 (RFC 2104) over ``SHA1``: the 20-byte MAC STUN's
/// MESSAGE-INTEGRITY carries (RFC 8489 14.5).
///
/// ```swift
/// let mac = HMACSHA1.authenticate(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
/// // effcdf6a e5eb2fa2 d27416d5 f184df9c 259a7c79 (RFC 2202 test case 2)
/// ```
public enum HMACSHA1 {
    /// The MAC of `message` under `key` (a key longer than SHA-1's 64-byte
    /// block is hashed first, as RFC 2104 says).
    public static func authenticate(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? SHA1.hash(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = SHA1.hash(block.map { $0 ^ 0x36 } + message)
        return SHA1.hash(block.map { $0 ^ 0x5C } + inner)
    }
}
