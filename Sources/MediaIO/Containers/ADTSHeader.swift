// AAC in ADTS form (MPEG-TS, SRT, UDP, HLS) made into raw AAC with an
// AudioSpecificConfig, as MP4, QuickTime and Matroska store it.

import MediaCore

/// The fields of an ADTS frame header (ISO/IEC 13818-7 6.2 / ISO/IEC 14496-3
/// 1.A.2.2) that an AudioSpecificConfig repeats, and the header's length.
struct ADTSHeader: Equatable, Sendable {
    /// `profile_ObjectType` + 1: the MPEG-4 audio object type (2 for AAC LC).
    var audioObjectType: Int
    /// `sampling_frequency_index` (3 for 48 kHz, 4 for 44.1 kHz).
    var samplingFrequencyIndex: Int
    /// `channel_configuration` (1 mono, 2 stereo, … 7 for 7.1).
    var channelConfiguration: Int
    /// 7 bytes, or 9 with the CRC (`protection_absent` 0).
    var headerLength: Int
    /// `aac_frame_length`: the header and the raw data block.
    var frameLength: Int
    /// `number_of_raw_data_blocks_in_frame` + 1.
    var rawDataBlocks: Int

    /// The sampling frequencies by `sampling_frequency_index` (ISO/IEC 14496-3 table 1.18).
    static let samplingFrequencies = [
        96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000, 7_350,
    ]

    /// Reads the header at the start of `bytes`; nil when they do not start
    /// with the ADTS syncword (`0xFFF`, layer 0).
    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 7, bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 else { return nil }
        let protectionAbsent = bytes[1] & 1
        audioObjectType = Int(bytes[2] >> 6) + 1
        samplingFrequencyIndex = Int(bytes[2] >> 2) & 0x0F
        channelConfiguration = Int(bytes[2] & 1) << 2 | Int(bytes[3] >> 6)
        frameLength = Int(bytes[3] & 0x03) << 11 | Int(bytes[4]) << 3 | Int(bytes[5] >> 5)
        rawDataBlocks = Int(bytes[6] & 0x03) + 1
        headerLength = protectionAbsent == 1 ? 7 : 9
    }

    /// The two-byte AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1) of these
    /// fields: object type, frequency index, channel configuration, then a
    /// GASpecificConfig of three zero bits (1024-sample frames, no core
    /// coder, no extension).
    var audioSpecificConfig: [UInt8] {
        [
            UInt8(audioObjectType << 3 | samplingFrequencyIndex >> 1),
            UInt8((samplingFrequencyIndex & 1) << 7 | channelConfiguration << 3),
        ]
    }

    /// What a raw-AAC container cannot take from this frame, or nil.
    var refusal: String? {
        if samplingFrequencyIndex >= Self.samplingFrequencies.count {
            return "its ADTS header has the reserved sampling frequency index \(samplingFrequencyIndex)"
        }
        if channelConfiguration == 0 {
            return "its ADTS header leaves the channels to a program config element, which is not converted here"
        }
        if rawDataBlocks > 1 {
            return "an ADTS frame of \(rawDataBlocks) raw data blocks is not split here"
        }
        if frameLength < headerLength {
            return "its ADTS header gives a frame length of \(frameLength) bytes, shorter than the header"
        }
        return nil
    }

    /// `sampleRate` Hz and `channels` AAC LC, for a track whose first ADTS
    /// header did not come in time; nil when ADTS cannot signal them.
    init?(lowComplexitySampleRate sampleRate: Int?, channels: Int?) {
        guard let sampleRate, let channels,
            let index = Self.samplingFrequencies.firstIndex(of: sampleRate),
            (1...8).contains(channels), channels != 7
        else { return nil }
        audioObjectType = 2
        samplingFrequencyIndex = index
        channelConfiguration = channels == 8 ? 7 : channels
        headerLength = 7
        frameLength = 7
        rawDataBlocks = 1
    }

    /// Whether `other` describes the same stream (object type, frequency, channels).
    func hasSameConfiguration(as other: ADTSHeader) -> Bool {
        audioObjectType == other.audioObjectType && samplingFrequencyIndex == other.samplingFrequencyIndex
            && channelConfiguration == other.channelConfiguration
    }

    /// `"AAC object type 2, 48000 Hz, channel configuration 2"`, for messages.
    var summary: String {
        let rate =
            Self.samplingFrequencies.indices.contains(samplingFrequencyIndex)
            ? "\(Self.samplingFrequencies[samplingFrequencyIndex]) Hz" : "frequency index \(samplingFrequencyIndex)"
        return "AAC object type \(audioObjectType), \(rate), channel configuration \(channelConfiguration)"
    }
}

/// One copied AAC track whose packets carry ADTS headers, written to a
/// container that stores raw AAC: the configuration the track was created
/// with, and the stripping of each packet's header.
struct ADTSConversion: Sendable {
    /// The configuration of the first ADTS frame (or the fallback), once known.
    var configuration: ADTSHeader?

    /// `packet`'s raw data block: the bytes after its ADTS header.
    ///
    /// - Throws: `.unsupported` when the packet is not one ADTS frame of the
    ///   track's configuration (`track` names it in the message).
    func rawBlock(of packet: TrackPacket, track: String) throws(MediaError) -> [UInt8] {
        guard let header = ADTSHeader(packet.data) else {
            throw .unsupported("\(track): a packet (pts \(packet.pts)) has no ADTS header although the first had one")
        }
        if let refusal = header.refusal { throw .unsupported("\(track): a packet (pts \(packet.pts)): \(refusal)") }
        if let configuration, !header.hasSameConfiguration(as: configuration) {
            throw .unsupported(
                "\(track): the AAC stream changed from \(configuration.summary) to \(header.summary) at pts "
                    + "\(packet.pts); a track here holds one configuration")
        }
        guard header.frameLength == packet.data.count else {
            throw .unsupported(
                "\(track): a packet (pts \(packet.pts)) of \(packet.data.count) bytes holds an ADTS frame of "
                    + "\(header.frameLength) bytes; one frame per packet is expected")
        }
        return Array(packet.data[header.headerLength...])
    }
}
