import MediaCore

/// Writing HDR10 static metadata as an SEI NAL unit, for encoders that do not
/// write it themselves (the VA-API backend): a mastering display colour volume
/// message (payload type 137; H.264 D.1.29, H.265 D.2.28) and a content light
/// level information message (144; H.264 D.1.31, H.265 D.2.35), each present
/// when the metadata has it, in one SEI NAL unit (H.264 type 6, HEVC prefix
/// SEI type 39 with TemporalId 0).
///
/// The fields are written as x264 and x265 write them: primaries in the order
/// c = 0 green, 1 blue, 2 red, chromaticities in units of 0.00002, luminances
/// in units of 0.0001 cd/m², rounded to the nearest unit
/// (`H264SEI.hdr10(in:)` reads them back).
package enum HDR10SEI {
    /// The SEI NAL unit (header included, emulation prevention applied) for
    /// `metadata`, or nil when it holds neither message.
    package static func nalUnit(_ metadata: HDR10Metadata, codec: CodecType) -> [UInt8]? {
        var rbsp: [UInt8] = []
        func u16(_ value: Int) {
            rbsp.append(UInt8(truncatingIfNeeded: value >> 8))
            rbsp.append(UInt8(truncatingIfNeeded: value))
        }
        func u32(_ value: Int64) {
            u16(Int(value >> 16))
            u16(Int(value & 0xFFFF))
        }
        // Both payload sizes (24 and 4) are below 255: one byte each for type
        // and size, 137 and 144 too.
        if let display = metadata.masteringDisplay {
            rbsp += [UInt8(H264SEI.masteringDisplayPayloadType), 24]
            for point in [display.green, display.blue, display.red, display.whitePoint] {
                u16(HDR10Metadata.chromaticityUnits(point.x))
                u16(HDR10Metadata.chromaticityUnits(point.y))
            }
            u32(HDR10Metadata.luminanceUnits(display.maxLuminance))
            u32(HDR10Metadata.luminanceUnits(display.minLuminance))
        }
        if let light = metadata.contentLightLevel {
            rbsp += [UInt8(H264SEI.contentLightLevelPayloadType), 4]
            u16(light.maxContentLightLevel)
            u16(light.maxFrameAverageLightLevel)
        }
        guard !rbsp.isEmpty else { return nil }
        rbsp.append(0x80)  // rbsp_trailing_bits
        let header: [UInt8] = codec == .h264 ? [0x06] : [39 << 1, 0x01]
        return header + RBSP.escape(rbsp)
    }

    /// `sample` (length-prefixed, `lengthSize` 4) with `sei` inserted behind a
    /// length in front of its first picture NAL unit, after any SEI, AUD or
    /// parameter set already there (H.264 7.4.1.2.3, H.265 7.4.2.4.4: an SEI
    /// precedes the first VCL NAL unit of its access unit). A sample without
    /// a picture NAL unit gets it at the end.
    package static func inserting(_ sei: [UInt8], into sample: [UInt8], codec: CodecType) -> [UInt8] {
        // The first picture NAL unit's length field; a sample the scanner
        // cannot read gets the SEI at the end, as one without pictures.
        let ranges = (try? LengthPrefixed.nalUnitRanges(in: sample, lengthSize: 4, codec: codec)) ?? []
        let firstPicture = sample.withUnsafeBytes { bytes in
            ranges.first { NALUnitKind(codec: codec, UnsafeRawBufferPointer(rebasing: bytes[$0])).isVCL }
        }
        let offset = firstPicture.map { $0.lowerBound - 4 } ?? sample.count
        var output: [UInt8] = []
        output.reserveCapacity(sample.count + 4 + sei.count)
        output += sample[..<offset]
        output += [
            UInt8(truncatingIfNeeded: sei.count >> 24), UInt8(truncatingIfNeeded: sei.count >> 16),
            UInt8(truncatingIfNeeded: sei.count >> 8), UInt8(truncatingIfNeeded: sei.count),
        ]
        output += sei
        output += sample[offset...]
        return output
    }
}
