/// Reading the SEI messages of an H.264 SEI NAL unit (H.264 7.3.2.3.1): each
/// `sei_message` is a `payloadType` and a `payloadSize`, both coded as a run
/// of 0xFF bytes plus a last byte, then the payload.
package enum H264SEI {
    /// `payloadType` of the recovery point SEI message (H.264 D.1.8).
    static let recoveryPointPayloadType = 6

    /// The payload types of the messages in an SEI NAL unit (header byte
    /// included, emulation-prevention bytes kept). Reading stops at the RBSP
    /// trailing bits or at the first message that runs past the end.
    static func payloadTypes(in nal: some Collection<UInt8>) -> [Int] {
        let rbsp = RBSP.unescape(nal.dropFirst())
        var types: [Int] = []
        var index = 0
        func readCoded() -> Int? {
            var value = 0
            while index < rbsp.count {
                let byte = rbsp[index]
                index += 1
                value += Int(byte)
                if byte != 0xFF { return value }
            }
            return nil
        }
        // more_rbsp_data(): stop at the final 0x80 (the stop bit) or the end.
        while index < rbsp.count && !(index == rbsp.count - 1 && rbsp[index] == 0x80) {
            guard let type = readCoded(), let size = readCoded(), size <= rbsp.count - index else { break }
            types.append(type)
            index += size
        }
        return types
    }

    /// Whether the SEI NAL unit carries a recovery point (D.2.8): a picture
    /// where decoding can start, as an IDR in streams without IDR pictures
    /// after the first (open GOPs, intra refresh, broadcast captures).
    package static func containsRecoveryPoint(_ nal: some Collection<UInt8>) -> Bool {
        payloadTypes(in: nal).contains(recoveryPointPayloadType)
    }
}
