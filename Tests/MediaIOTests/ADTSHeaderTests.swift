import Foundation
import MediaCore
import TestSupport
import Testing

@testable import MediaIO

/// ``ADTSHeader`` and ``ADTSConversion``: the fields ISO/IEC 14496-3 1.A.2.2
/// puts in an ADTS header, the AudioSpecificConfig made of them (against
/// FFmpeg's for the same stream) and the refusals, each saying why.
struct ADTSHeaderTests {
    /// An ADTS header (ISO/IEC 14496-3 table 1.A.5 and 1.A.6), laid out bit by bit.
    static func header(
        objectType: Int = 2, frequencyIndex: Int = 3, channels: Int = 2, frameLength: Int, crc: Bool = false,
        rawDataBlocks: Int = 1
    ) -> [UInt8] {
        var bits: [Int] = []
        func put(_ value: Int, _ count: Int) { for bit in (0..<count).reversed() { bits.append(value >> bit & 1) } }
        put(0xFFF, 12)  // syncword
        put(0, 1)  // ID
        put(0, 2)  // layer
        put(crc ? 0 : 1, 1)  // protection_absent
        put(objectType - 1, 2)  // profile_ObjectType
        put(frequencyIndex, 4)
        put(0, 1)  // private_bit
        put(channels, 3)
        put(0, 4)  // original_copy, home, copyright_identification_bit and _start
        put(frameLength, 13)
        put(0x7FF, 11)  // adts_buffer_fullness
        put(rawDataBlocks - 1, 2)
        if crc { put(0xABCD, 16) }
        return stride(from: 0, to: bits.count, by: 8).map { start in
            UInt8(bits[start..<start + 8].reduce(0) { $0 << 1 | $1 })
        }
    }

    static func packet(_ data: [UInt8]) -> TrackPacket {
        TrackPacket(
            track: 1, data: data, pts: MediaTime(value: 0, timescale: 90_000), dts: .invalid, duration: .invalid,
            isKeyframe: true, isCorrupt: false, sideData: [])
    }

    /// The AudioSpecificConfig made from the first ADTS header of an AAC
    /// track in MPEG-TS is the one FFmpeg's `aac_adtstoasc` writes into an
    /// MP4 of the same stream.
    @Test func audioSpecificConfigIsFFmpegs() throws {
        let directory = try TemporaryDirectory()
        let ts = directory.path("in.ts")
        try MultiTrackMedia.make(ts, audio: [MultiTrackMedia.Audio("aac", sampleRate: 44_100)])
        let mp4 = directory.path("ffmpeg.mp4")
        try runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", ts, "-c", "copy", "-bsf:a", "aac_adtstoasc", mp4])
        let expected = try #require(try MovieReader.tracks(inFile: mp4).first { $0.kind == .audio })
        let reader = try MovieReader(path: ts, readingEveryTrack: true)
        var first: TrackPacket? = nil
        while first == nil, let item = try reader.nextItem() {
            if case .packet(let packet) = item { first = packet }
        }
        let packet = try #require(first)
        let header = try #require(ADTSHeader(packet.data))
        #expect(header.refusal == nil)
        #expect(header.audioSpecificConfig == Array(expected.codecConfiguration.prefix(2)))
    }

    /// Fields are read as laid out, with and without the CRC; the raw data
    /// block is what follows the 7 or 9 header bytes.
    @Test(arguments: [false, true])
    func fieldsAndRawBlock(crc: Bool) throws {
        let payload: [UInt8] = [0x21, 0x10, 0x05, 0x00]
        let length = (crc ? 9 : 7) + payload.count
        let bytes = Self.header(objectType: 2, frequencyIndex: 4, channels: 1, frameLength: length, crc: crc) + payload
        let header = try #require(ADTSHeader(bytes))
        #expect(header.audioObjectType == 2)
        #expect(header.samplingFrequencyIndex == 4)
        #expect(header.channelConfiguration == 1)
        #expect(header.frameLength == length)
        #expect(header.headerLength == (crc ? 9 : 7))
        // ISO/IEC 14496-3 1.6.2.1: 00010 0100 0001 000 → 0x12 0x08.
        #expect(header.audioSpecificConfig == [0x12, 0x08])
        let conversion = ADTSConversion(configuration: header)
        #expect(try conversion.rawBlock(of: Self.packet(bytes), track: "track 1") == payload)
    }

    /// What a raw-AAC track cannot take is refused with the reason.
    @Test(arguments: [
        (Self.header(frequencyIndex: 13, frameLength: 7), "reserved sampling frequency index 13"),
        (Self.header(channels: 0, frameLength: 7), "program config element"),
        (Self.header(frameLength: 7, rawDataBlocks: 2), "2 raw data blocks"),
        (Self.header(frameLength: 5), "shorter than the header"),
    ])
    func refusals(bytes: [UInt8], reason: String) throws {
        let header = try #require(ADTSHeader(bytes))
        #expect(header.refusal?.contains(reason) == true, "\(header.refusal ?? "nil")")
    }

    /// A packet without the syncword, of another configuration, or whose
    /// length is not its frame's is refused, naming the track.
    @Test func packetsThatDoNotFitAreRefused() throws {
        let configuration = try #require(ADTSHeader(Self.header(frameLength: 9)))
        let conversion = ADTSConversion(configuration: configuration)
        let cases: [([UInt8], String)] = [
            ([0x21, 0x10, 0x05, 0x00, 0, 0, 0], "has no ADTS header"),
            (Self.header(frequencyIndex: 4, frameLength: 9) + [0, 0], "AAC stream changed from"),
            (Self.header(frameLength: 12) + [0, 0], "holds an ADTS frame of 12 bytes"),
        ]
        for (bytes, reason) in cases {
            do {
                _ = try conversion.rawBlock(of: Self.packet(bytes), track: "track 1: audio aac")
                Issue.record("accepted: \(reason)")
            } catch {
                #expect(error.code == .unsupported)
                #expect(error.message.hasPrefix("track 1: audio aac") && error.message.contains(reason), "\(error)")
            }
        }
        #expect(ADTSHeader([0xFF, 0xF1, 0x50]) == nil)
    }
}
