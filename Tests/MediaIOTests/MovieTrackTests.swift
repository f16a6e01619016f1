import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import MediaIO

extension ContainerTests {
    /// ``MovieReader``'s tracks and packets of every track, and
    /// ``MovieWriter``'s stream copy, against ffprobe and FFmpeg's stream copy.
    @Suite struct MovieTrackTests {
        typealias Audio = MultiTrackMedia.Audio

        /// Every track is listed as ffprobe lists it: kind, codec, language,
        /// sample rate, time base and the AAC AudioSpecificConfig.
        @Test func tracksAreListed() throws {
            let directory = try TemporaryDirectory()
            let path = directory.path("in.mp4")
            try MultiTrackMedia.make(
                path, audio: [Audio("aac", language: "eng"), Audio("libmp3lame", sampleRate: 44_100)],
                subtitleCodec: "mov_text")
            let reader = try MovieReader(path: path)
            #expect(reader.tracks.map(\.kind) == [.video, .audio, .audio, .subtitle])
            #expect(reader.tracks.map(\.codecName) == ["h264", "aac", "mp3", "mov_text"])
            #expect(reader.tracks.map(\.language) == [nil, "eng", nil, nil])
            #expect(reader.tracks.map(\.sampleRate) == [nil, 48_000, 44_100, nil])
            #expect(reader.tracks[1].channelCount == 1)
            #expect(reader.tracks[0].width == 160 && reader.tracks[0].height == 120)
            #expect(reader.tracks[1].timeBase == MediaTime(value: 1, timescale: 48_000))
            // ISO/IEC 14496-3 1.6.2.1: AAC LC (object type 2), 48 kHz (index 3), 1 channel.
            #expect(reader.tracks[1].codecConfiguration.prefix(2) == [0x11, 0x88])
            #expect(reader.trackIndex == 0)
            #expect(try MovieReader.tracks(inFile: path).map(\.codecName) == reader.tracks.map(\.codecName))
        }

        /// `nextItem()` returns the packets of every track in the order
        /// libavformat reads them (ffprobe's packet order), the video as
        /// samples; `nextSample()` on a reader of the video alone gives the
        /// same samples.
        @Test(arguments: ["mp4", "mkv", "ts"])
        func itemsComeInFileOrder(container: String) throws {
            let directory = try TemporaryDirectory()
            let path = directory.path("in.\(container)")
            try MultiTrackMedia.make(path, audio: [Audio("aac"), Audio("libmp3lame", sampleRate: 44_100)])
            let expected = try MultiTrackMedia.packets(path)
            let reader = try MovieReader(path: path, readingEveryTrack: true)
            var order: [Int] = []
            var samples: [CompressedSample] = []
            var audioTimes: [MediaTime] = []
            while let item = try reader.nextItem() {
                switch item {
                case .sample(let sample):
                    order.append(reader.trackIndex)
                    samples.append(sample)
                case .packet(let packet):
                    order.append(packet.track)
                    if packet.track == 1 { audioTimes.append(packet.pts) }
                    #expect(!packet.isCorrupt)
                }
            }
            #expect(order == expected.map(\.stream))
            #expect(samples.count == 60)
            let expectedTimes = expected.filter { $0.stream == 1 }.map { $0.pts ?? .nan }
            #expect(audioTimes.count == expectedTimes.count)
            for (time, seconds) in zip(audioTimes, expectedTimes) { #expect(abs(time.seconds - seconds) < 1e-6) }
            let videoOnly = try MovieReader(path: path).readAllSamples()
            #expect(videoOnly.map(\.data) == samples.map(\.data))
            #expect(videoOnly.map(\.pts) == samples.map(\.pts))
        }

        /// The writer copies other tracks packet for packet: FFmpeg's stream
        /// copy of the audio reads the same bytes from the copy.
        @Test(arguments: ["mkv", "mp4", "ts"])
        func writerCopiesTracks(container: String) throws {
            let directory = try TemporaryDirectory()
            let path = directory.path("in.mp4")
            try MultiTrackMedia.make(path, audio: [Audio("aac"), Audio("libmp3lame", sampleRate: 44_100)])
            let reader = try MovieReader(path: path, readingEveryTrack: true)
            let output = directory.path("out.\(container)")
            let writer = try MovieWriter(path: output)
            var copied: [Int: Int] = [:]
            for track in reader.tracks where track.index != reader.trackIndex {
                #expect(writer.copyRefusal(for: track) == nil)
                copied[track.index] = try writer.addTrack(copying: track)
            }
            #expect(copied == [1: 1, 2: 2])
            while let item = try reader.nextItem() {
                switch item {
                case .sample(let sample): try writer.append(sample)
                case .packet(let packet): try writer.append(packet, toTrack: copied[packet.track]!)
                }
            }
            try writer.finish()
            let packets = try MultiTrackMedia.packets(path)
            #expect(writer.copiedPacketCount == packets.filter { $0.stream != 0 }.count)
            #expect(
                try MultiTrackMedia.packetMD5(
                    output, stream: "a:0", bitstreamFilter: container == "ts" ? "aac_adtstoasc" : nil)
                    == (try MultiTrackMedia.packetMD5(path, stream: "a:0")))
            #expect(
                try MultiTrackMedia.packetMD5(output, stream: "a:1")
                    == (try MultiTrackMedia.packetMD5(path, stream: "a:1")))
        }

        /// Every copy of a track's codec parameters is released with the
        /// reader and the writer that hold it.
        @Test func codecParametersAreReleased() throws {
            let directory = try TemporaryDirectory()
            let path = directory.path("in.mkv")
            try MultiTrackMedia.make(path, audio: [Audio("libopus")], subtitleCodec: "srt")
            let kind = LiveObjects.Kind(rawValue: "AVCodecParameters")
            let before = LiveObjects.count(kind)
            do {
                let reader = try MovieReader(path: path, readingEveryTrack: true)
                #expect(LiveObjects.count(kind) == before + 3)
                let writer = try MovieWriter(path: directory.path("out.mkv"))
                for track in reader.tracks.dropFirst() { _ = try writer.addTrack(copying: track) }
                #expect(LiveObjects.count(kind) == before + 3)
            }
            #expect(LiveObjects.count(kind) == before)
        }

        /// A codec the container cannot hold is refused with the reason.
        @Test func refusalsSayWhy() throws {
            let directory = try TemporaryDirectory()
            let path = directory.path("in.mp4")
            try MultiTrackMedia.make(path, audio: [], subtitleCodec: "mov_text")
            let subtitles = try MovieReader(path: path).tracks[1]
            #expect(try MovieWriter(path: directory.path("a.mp4")).copyRefusal(for: subtitles) == nil)
            #expect(
                try MovieWriter(path: directory.path("a.mkv")).copyRefusal(for: subtitles)?
                    .hasPrefix("Matroska cannot hold mov_text subtitle") == true)
            #expect(
                try MovieWriter(path: directory.path("a.ts")).copyRefusal(for: subtitles)
                    == "MPEG-TS cannot hold mov_text subtitle")
            #expect(throws: MediaError.self) {
                try MovieWriter(path: directory.path("b.mkv")).addTrack(copying: subtitles)
            }
        }
    }
}
