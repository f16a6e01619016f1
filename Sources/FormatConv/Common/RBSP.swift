/// Conversion between a NAL unit's payload as stored (with emulation-prevention
/// bytes) and its raw byte sequence payload (RBSP), H.264 7.3.1 / 7.4.1 and
/// H.265 7.3.1.1 / 7.4.2.
///
/// Inside a NAL unit the byte patterns `00 00 00`, `00 00 01`, `00 00 02` and
/// `00 00 03` never occur: an encoder inserts an `emulation_prevention_three_byte`
/// (0x03) after every pair of zero bytes that would be followed by a byte ≤ 3.
/// Syntax elements must be read only after those bytes are removed.
public enum RBSP {
    /// Removes every emulation-prevention byte: each `03` that follows two zero
    /// bytes is dropped (H.264 7.4.1). The result is never longer than the input.
    public static func unescape(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var zeros = 0
        for byte in bytes {
            if zeros >= 2 && byte == 0x03 {
                zeros = 0
                continue
            }
            output.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return output
    }

    /// Inserts the emulation-prevention bytes a NAL unit payload needs: a `03` after
    /// two zero bytes that are followed by a byte ≤ 3, and after a trailing pair of
    /// zero bytes (a NAL unit may not end in `00`). `unescape(escape(x)) == x`.
    public static func escape(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 64 + 2)
        var zeros = 0
        for byte in bytes {
            if zeros >= 2 && byte <= 0x03 {
                output.append(0x03)
                zeros = 0
            }
            output.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        if zeros >= 2 {
            output.append(0x03)
        }
        return output
    }

    /// The number of emulation-prevention bytes `unescape` would remove.
    public static func emulationPreventionByteCount(in bytes: some Collection<UInt8>) -> Int {
        var count = 0
        var zeros = 0
        for byte in bytes {
            if zeros >= 2 && byte == 0x03 {
                count += 1
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return count
    }
}
