import MediaCore

/// Reading the SEI messages of an H.264 SEI NAL unit (H.264 7.3.2.3.1): each
/// `sei_message` is a `payloadType` and a `payloadSize`, both coded as a run
/// of 0xFF bytes plus a last byte, then the payload.
package enum H264SEI {
    /// `payloadType` of the recovery point SEI message (H.264 D.1.8).
    static let recoveryPointPayloadType = 6
    /// `payloadType` of the mastering display colour volume SEI message
    /// (H.264 D.1.29, H.265 D.2.28; SMPTE ST 2086).
    static let masteringDisplayPayloadType = 137
    /// `payloadType` of the content light level information SEI message
    /// (H.264 D.1.31, H.265 D.2.35; CTA-861.3).
    static let contentLightLevelPayloadType = 144

    /// Calls `visit` with each message of an SEI NAL unit (header byte
    /// included, emulation-prevention bytes kept): its `payloadType` and its
    /// payload bytes, emulation prevention removed, until `visit` returns
    /// false. Reading stops at the RBSP trailing bits or at the first message
    /// that runs past the end.
    static func visitMessages(
        in nal: some Collection<UInt8>, _ visit: (_ type: Int, _ payload: ArraySlice<UInt8>) -> Bool
    ) {
        let rbsp = RBSP.unescape(nal.dropFirst())
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
            guard visit(type, rbsp[index..<index + size]) else { return }
            index += size
        }
    }

    /// Whether the SEI NAL unit carries a recovery point (D.2.8): a picture
    /// where decoding can start, as an IDR in streams without IDR pictures
    /// after the first (open GOPs, intra refresh, broadcast captures).
    package static func containsRecoveryPoint(_ nal: some Collection<UInt8>) -> Bool {
        var found = false
        visitMessages(in: nal) { type, _ in
            found = type == recoveryPointPayloadType
            return !found
        }
        return found
    }

    /// The HDR10 static metadata in an SEI NAL unit: its mastering display
    /// colour volume (D.1.29) and content light level (D.1.31) messages, or
    /// nil when it has neither. A message shorter than its syntax (24 and 4
    /// bytes) is ignored.
    ///
    /// The three primaries are read in the order the semantics give (c = 0
    /// green, 1 blue, 2 red, as x264, x265 and FFmpeg write them);
    /// chromaticities are in units of 0.00002, luminances of 0.0001 cd/m²
    /// (each value is the `Double` nearest to units ÷ 50000 or ÷ 10000, so
    /// a value on that grid reads back equal to the one written).
    package static func hdr10(in nal: some Collection<UInt8>) -> HDR10Metadata? {
        var metadata = HDR10Metadata()
        visitMessages(in: nal) { type, bytes in
            let payload = Array(bytes)
            func u16(_ offset: Int) -> Int { Int(payload[offset]) << 8 | Int(payload[offset + 1]) }
            func u32(_ offset: Int) -> Int { u16(offset) << 16 | u16(offset + 2) }
            switch type {
            case masteringDisplayPayloadType where payload.count >= 24:
                func chromaticity(_ offset: Int) -> HDR10Metadata.Chromaticity {
                    .init(x: Double(u16(offset)) / 50000, y: Double(u16(offset + 2)) / 50000)
                }
                metadata.masteringDisplay = HDR10Metadata.MasteringDisplay(
                    red: chromaticity(8), green: chromaticity(0), blue: chromaticity(4),
                    whitePoint: chromaticity(12), maxLuminance: Double(u32(16)) / 10000,
                    minLuminance: Double(u32(20)) / 10000)
            case contentLightLevelPayloadType where payload.count >= 4:
                metadata.contentLightLevel = HDR10Metadata.ContentLightLevel(
                    maxContentLightLevel: u16(0), maxFrameAverageLightLevel: u16(2))
            default:
                break
            }
            return true
        }
        return metadata.masteringDisplay == nil && metadata.contentLightLevel == nil ? nil : metadata
    }

    /// The HDR10 static metadata in the SEI NAL units of a length-prefixed
    /// H.264 sample (`lengthSize` 1, 2 or 4), nil when it has none or does
    /// not parse. A message found later in the sample replaces an earlier
    /// one of the same type.
    package static func hdr10(inSample data: [UInt8], lengthSize: Int) -> HDR10Metadata? {
        guard let units = try? LengthPrefixed.nalUnits(in: data, lengthSize: lengthSize, codec: .h264) else {
            return nil
        }
        var found: HDR10Metadata?
        for unit in units where H264NALUnitType(rawValue: unit[unit.startIndex]) == .sei {
            guard let metadata = hdr10(in: unit) else { continue }
            var merged = found ?? HDR10Metadata()
            if let display = metadata.masteringDisplay { merged.masteringDisplay = display }
            if let light = metadata.contentLightLevel { merged.contentLightLevel = light }
            found = merged
        }
        return found
    }
}
