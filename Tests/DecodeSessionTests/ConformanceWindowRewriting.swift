import FormatConv
import MediaCore
import TestSupport

/// HEVC streams with a conformance window on every edge, which x265 does
/// not write (it windows only the padding on the right and bottom): the
/// SPS of an x265 stream rewritten bit by bit with new
/// `conf_win_*_offset` values (H.265 7.3.2.2.1), every other bit kept. The
/// decoded pictures are the same; only their crop changes, and x265's
/// picture hashes, which cover the whole decoded picture, still hold.
enum ConformanceWindowRewriting {
    /// `nal` (an SPS NAL unit whose `sps_max_sub_layers_minus1` is 0, as
    /// x265 writes by default) with its conformance window set to the four
    /// offsets, in chroma samples (luma samples × SubWidthC / SubHeightC).
    static func sps(_ nal: [UInt8], left: Int, right: Int, top: Int, bottom: Int) throws -> [UInt8] {
        guard try HEVCSequenceParameterSet(nal: nal).sps_max_sub_layers_minus1 == 0 else {
            throw ProcessError("only SPSs of one sub-layer are rewritten")
        }
        let rbsp = RBSP.unescape(nal.dropFirst(2))
        var bits: [Bool] = []
        for byte in rbsp {
            for shift in (0..<8).reversed() { bits.append((byte >> UInt8(shift)) & 1 == 1) }
        }
        var position = 0
        func read(_ count: Int) -> Int {
            var value = 0
            for _ in 0..<count {
                value = value << 1 | (bits[position] ? 1 : 0)
                position += 1
            }
            return value
        }
        func ue() -> Int {
            var zeros = 0
            while !bits[position] {
                zeros += 1
                position += 1
            }
            position += 1
            return (1 << zeros) - 1 + read(zeros)
        }
        func ueBits(_ value: Int) -> [Bool] {
            let coded = value + 1
            let length = Int.bitWidth - coded.leadingZeroBitCount
            var written = [Bool](repeating: false, count: length - 1)
            for shift in (0..<length).reversed() { written.append((coded >> shift) & 1 == 1) }
            return written
        }
        // sps_video_parameter_set_id, sps_max_sub_layers_minus1,
        // sps_temporal_id_nesting_flag, then profile_tier_level(1, 0): 96 bits.
        position = 4 + 3 + 1 + 96
        _ = ue()  // sps_seq_parameter_set_id
        if ue() == 3 { position += 1 }  // chroma_format_idc, separate_colour_plane_flag
        _ = ue()  // pic_width_in_luma_samples
        _ = ue()  // pic_height_in_luma_samples
        let windowFlag = position
        if read(1) == 1 { for _ in 0..<4 { _ = ue() } }
        let rest = position
        guard let stopBit = bits.lastIndex(of: true), stopBit >= rest else {
            throw ProcessError("no rbsp_stop_one_bit")
        }
        var output: [Bool] = Array(bits[..<windowFlag])
        output.append(true)
        for offset in [left, right, top, bottom] { output += ueBits(offset) }
        output += bits[rest..<stopBit]
        output.append(true)
        while output.count % 8 != 0 { output.append(false) }
        var bytes: [UInt8] = []
        for start in stride(from: 0, to: output.count, by: 8) {
            var byte: UInt8 = 0
            for bit in output[start..<start + 8] { byte = byte << 1 | (bit ? 1 : 0) }
            bytes.append(byte)
        }
        return Array(nal.prefix(2)) + RBSP.escape(bytes)
    }

    /// `samples` with their description's SPS given the window.
    static func samples(_ samples: [CompressedSample], left: Int, right: Int, top: Int, bottom: Int) throws
        -> [CompressedSample]
    {
        let sets = samples[0].formatDescription.parameterSets
        let rewritten = try sets.map { set in
            HEVCNALUnitHeader(set[0], set[1]).type == .sps
                ? try sps(set, left: left, right: right, top: top, bottom: bottom) : set
        }
        let description = try FormatDescription(hevcParameterSets: rewritten)
        return samples.map { sample in
            var copy = sample
            copy.formatDescription = description
            return copy
        }
    }
}
