/// Base64 (RFC 4648 section 4, standard alphabet, `=` padding), without
/// Foundation: SDP's sprop parameters, the WebSocket handshake, the page
/// server's stream description.
///
/// ```swift
/// Base64.encode(Array("foobar".utf8))   // "Zm9vYmFy"
/// try Base64.decode("Zm9vYg==")         // the bytes of "foob"
/// ```
public enum Base64 {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 255 marks a byte outside the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 255, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// The base64 text of `bytes`, padded with `=` to a multiple of 4.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= input.count {
            let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            for shift in [18, 12, 6, 0] { output.append(alphabet[Int((group >> UInt32(shift)) & 0x3F)]) }
            index += 3
        }
        let rest = input.count - index
        if rest > 0 {
            let group = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
            output.append(alphabet[Int(group >> 18)])
            output.append(alphabet[Int((group >> 12) & 0x3F)])
            output.append(rest == 2 ? alphabet[Int((group >> 6) & 0x3F)] : UInt8(ascii: "="))
            output.append(UInt8(ascii: "="))
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes of base64 `text`. Padding is optional; whitespace is not
    /// accepted.
    /// - Throws: `.invalidData` naming the offset of a character outside the
    ///   alphabet, misplaced padding or a dangling single character.
    public static func decode(_ text: some StringProtocol) throws(MediaError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count / 4 * 3 + 3)
        var group: UInt32 = 0
        var count = 0
        var padding = 0
        for (offset, character) in text.utf8.enumerated() {
            if character == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            let value = values[Int(character)]
            guard value != 255, padding == 0 else {
                throw .invalidData(
                    padding == 0
                        ? "base64: byte 0x\(String(character, radix: 16)) at offset \(offset) is not in the alphabet"
                        : "base64: data after the '=' padding at offset \(offset)")
            }
            group = group << 6 | UInt32(value)
            count += 1
            if count == 4 {
                output.append(UInt8(group >> 16))
                output.append(UInt8(truncatingIfNeeded: group >> 8))
                output.append(UInt8(truncatingIfNeeded: group))
                group = 0
                count = 0
            }
        }
        switch count {
        case 0: break
        case 2: output.append(UInt8(truncatingIfNeeded: group >> 4))
        case 3:
            output.append(UInt8(truncatingIfNeeded: group >> 10))
            output.append(UInt8(truncatingIfNeeded: group >> 2))
        default:
            throw .invalidData("base64: a single character dangles at the end of \(text.utf8.count) characters")
        }
        guard padding <= 2 else { throw .invalidData("base64: \(padding) padding characters; at most 2 belong") }
        return output
    }
}
