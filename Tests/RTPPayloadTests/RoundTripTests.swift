import DecodeSession
import FormatConv
import MediaCore
import RTPPayload
import TestSupport
import Testing

/// Real streams from the x264 and x265 command lines (through ffmpeg),
/// packetized, optionally damaged, depacketized: clean paths give back every
/// sample byte for byte; lossy paths give only samples that decode exactly
/// like the clean stream from the keyframe where they resume.
struct RTPRoundTripTests {
    struct Packing: Sendable, CustomStringConvertible {
        var codec: CodecType
        var mode: RTPPacketizationMode = .nonInterleaved
        var aggregation: RTPAggregation
        var bound = 1200
        var don = 0
        var description: String { "\(codec) mode \(mode.rawValue) \(aggregation) bound \(bound) don \(don)" }

        var configuration: RTPPacketizer.Configuration {
            RTPPacketizer.Configuration(
                codec: codec, ssrc: 0xABCD, initialSequenceNumber: 65_000, timestampOffset: 123_456,
                maximumPayloadSize: bound, packetizationMode: mode, aggregation: aggregation,
                maximumDONDifference: don)
        }
    }

    static let packings: [Packing] = [
        Packing(codec: .h264, aggregation: .none),
        Packing(codec: .h264, aggregation: .zeroLatency),
        Packing(codec: .h264, aggregation: .maximal, bound: 500),
        Packing(codec: .hevc, aggregation: .zeroLatency),
        Packing(codec: .hevc, aggregation: .maximal, bound: 700, don: 2),
    ]

    @Test(arguments: packings)
    func cleanPathGivesBackEverySample(_ packing: Packing) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // B-frames and (H.264) several slices: SEI, slices, STAP/AP, FU.
        let stream = try RTPTestStreams.encode(
            packing.codec, frames: 40, gop: 15, bframes: 2, slices: 3, in: directory)
        let packets = try packetizeAll(stream.samples, packing.configuration)
        #expect(packets.allSatisfy { $0.count <= 12 + packing.bound }, "\(packing)")
        let (outputs, statistics) = depacketizeAll(
            packets, RTPDepacketizer.Configuration(codec: packing.codec, maximumDONDifference: packing.don))
        let got = emitted(outputs)
        #expect(got.count == stream.samples.count, "\(packing)")
        for (index, (sample, original)) in zip(got, stream.samples).enumerated() {
            #expect(sample.data == original.data, "\(packing): sample \(index)")
            #expect(sample.isKeyframe == original.isKeyframe, "\(packing): sample \(index)")
            #expect(sample.dependsOnOthers == original.dependsOnOthers, "\(packing): sample \(index)")
            #expect(sample.pts == original.pts, "\(packing): sample \(index)")
            #expect(sample.formatDescription == original.formatDescription, "\(packing): sample \(index)")
        }
        #expect(dropReports(outputs).isEmpty && statistics.lost == 0 && statistics.processed == packets.count)
    }

    /// Mode 0 with an encoder whose slices fit the bound (x264 slice-max-size).
    @Test func modeZeroWithSliceSizeLimitedEncoder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stream = try RTPTestStreams.encode(
            .h264, frames: 20, extra: ["-x264-params", "slice-max-size=1000"], in: directory)
        let configuration = RTPPacketizer.Configuration(
            codec: .h264, ssrc: 5, maximumPayloadSize: 1200, packetizationMode: .singleNALUnit)
        let packets = try packetizeAll(stream.samples, configuration)
        // Every packet is a single NAL unit (types 1 to 23).
        #expect(try packets.allSatisfy { (1...23).contains(try split($0).payload[0] & 0x1F) })
        let got = emitted(depacketizeAll(packets, RTPDepacketizer.Configuration(codec: .h264)).outputs)
        #expect(got.map(\.data) == stream.samples.map(\.data))
        // The same stream without the limit fails in mode 0.
        let unlimited = try RTPTestStreams.encode(.h264, frames: 1, in: directory, name: "big")
        #expect(throws: MediaError.self) { try packetizeAll(unlimited.samples, configuration) }
    }

    struct Loss: Sendable, CustomStringConvertible {
        var codec: CodecType
        var seed: UInt64
        var description: String { "\(codec) seed \(seed)" }
    }

    static let losses: [Loss] = [
        Loss(codec: .h264, seed: 11), Loss(codec: .h264, seed: 12), Loss(codec: .hevc, seed: 13),
    ]

    @Test(arguments: losses)
    func lossyPathEmitsOnlySamplesThatDecodeExactly(_ loss: Loss) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // IDR every 12 frames, no B-frames: decode order is output order and
        // recovery is exact from each IDR.
        let stream = try RTPTestStreams.encode(loss.codec, frames: 72, gop: 12, in: directory)
        let reference = try ffmpegFrameMD5(path: stream.path, everyFrame: true, pixelFormat: "yuv420p")
        #expect(reference.count == stream.samples.count)
        let packets = try packetizeAll(
            stream.samples, RTPPacketizer.Configuration(codec: loss.codec, ssrc: 3, maximumPayloadSize: 600))
        var faults = PacketFaultInjector(
            seed: loss.seed, dropProbability: 0.01, duplicateProbability: 0.02, reorderProbability: 0.05,
            reorderDistance: 3)
        var delivered: [[UInt8]] = []
        for packet in packets { delivered += faults.process(packet) }
        delivered += faults.flush()
        #expect(faults.statistics.dropped > 0, "\(loss): the seed must drop something")
        let (outputs, statistics) = depacketizeAll(delivered, RTPDepacketizer.Configuration(codec: loss.codec))
        let got = emitted(outputs)
        // Drops after the last delivered packet cannot be seen as losses.
        var trailing = 0
        while faults.statistics.droppedIndexes.contains(packets.count - 1 - trailing) { trailing += 1 }
        #expect(statistics.lost == faults.statistics.dropped - trailing, "\(loss)")
        #expect(statistics.duplicates == faults.statistics.duplicated, "\(loss)")
        #expect(!got.isEmpty && got.count < stream.samples.count, "\(loss)")
        // Frame index from the pts (25 fps, first packet at pts 0).
        let indexes = got.map { Int(($0.pts.converted(toTimescale: 25)).value) }
        #expect(indexes == indexes.sorted())
        // After every gap in the indexes, the next sample is a keyframe.
        for (position, index) in indexes.enumerated() where position == 0 || index != indexes[position - 1] + 1 {
            #expect(got[position].isKeyframe, "\(loss): sample for frame \(index) resumes without a keyframe")
        }
        for (sample, index) in zip(got, indexes) {
            #expect(sample.data == stream.samples[index].data, "\(loss): frame \(index)")
        }
        #expect(statistics.samples == got.count)
        #expect(statistics.droppedAccessUnitCount == dropReports(outputs).filter { $0.reason.isAccessUnitReason }.count)
        let (frames, session) = try decodeAll(got)
        #expect(session?.statistics.decoded == got.count, "\(loss)")
        #expect(frames.map { md5Hex($0.pixelBuffer) } == indexes.map { reference[$0] }, "\(loss)")
    }

    /// Truncated and dropped packets at random: whatever comes out is well
    /// formed, and the counters add up.
    @Test func truncatedPacketsNeverGiveMalformedSamples() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stream = try RTPTestStreams.encode(.h264, frames: 36, gop: 12, slices: 2, in: directory)
        let packets = try packetizeAll(
            stream.samples, RTPPacketizer.Configuration(codec: .h264, ssrc: 3, maximumPayloadSize: 400))
        for seed in UInt64(20)..<24 {
            var faults = PacketFaultInjector(seed: seed, dropProbability: 0.03, truncateProbability: 0.05)
            var depacketizer = RTPDepacketizer(configuration: RTPDepacketizer.Configuration(codec: .h264))
            var outputs: [RTPDepacketizerOutput] = []
            for packet in packets {
                for damaged in faults.process(packet) { outputs += depacketizer.receive(damaged) }
            }
            outputs += depacketizer.finish()
            for sample in emitted(outputs) {
                #expect(throws: Never.self) {
                    try LengthPrefixed.nalUnitRanges(in: sample.data, lengthSize: 4, codec: .h264)
                }
            }
            let s = depacketizer.statistics
            #expect(s.received == faults.statistics.packets - faults.statistics.dropped)
            #expect(s.received == s.duplicates + s.late + s.refusedBeforeProcessing + s.processed)
        }
    }
}

/// Open GOPs: after a loss, decoding resumes at an HEVC CRA and its RASL
/// pictures (which refer to pictures before the CRA) are dropped; what is
/// handed out decodes exactly like the same pictures of the clean stream.
struct RTPOpenGOPRecoveryTests {
    @Test func resumingAtACRADropsItsRASLPictures() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stream = try RTPTestStreams.encode(
            .hevc, frames: 48, gop: 12, bframes: 3, openGOP: true, in: directory, name: "open")
        func types(_ sample: CompressedSample) throws -> [UInt8] {
            try LengthPrefixed.nalUnits(in: sample.data, lengthSize: 4, codec: .hevc).map { ($0.first! >> 1) & 0x3F }
        }
        let allTypes = try stream.samples.map(types)
        #expect(allTypes.contains { $0.contains(21) }, "the stream must have CRA pictures")
        #expect(allTypes.contains { $0.contains { (8...9).contains($0) } }, "and RASL pictures")
        // The clean decode: the reference for each picture (by its pts),
        // and the same pictures ffmpeg decodes.
        let (cleanFrames, _) = try decodeAll(stream.samples)
        let reference = Dictionary(uniqueKeysWithValues: cleanFrames.map { ($0.pts, md5Hex($0.pixelBuffer)) })
        let ffmpeg = try ffmpegFrameMD5(path: stream.path, everyFrame: true, pixelFormat: "yuv420p")
        #expect(Set(reference.values) == Set(ffmpeg))

        let packets = try packetizeAll(stream.samples, RTPPacketizer.Configuration(codec: .hevc, ssrc: 2))
        // Lose the first packet of sample 5 (inside the first GOP).
        let lost = try #require(try packets.firstIndex { try split($0).header.timestamp == 5 * 3600 })
        var damaged = packets
        damaged.remove(at: lost)
        let (outputs, statistics) = depacketizeAll(damaged, RTPDepacketizer.Configuration(codec: .hevc))
        let got = emitted(outputs)
        #expect((statistics.droppedAccessUnits[.leadingPicture] ?? 0) > 0)
        let resume = try #require(got.firstIndex { $0.pts > MediaTime(value: 5, timescale: 25) })
        #expect(try types(got[resume]).contains(21))
        // No RASL picture between the CRA decoding resumed at and the next IRAP.
        let nextIRAP = try got[(resume + 1)...].firstIndex { try types($0).contains { (16...23).contains($0) } }
        for sample in got[(resume + 1)..<(nextIRAP ?? got.endIndex)] {
            #expect(try !types(sample).contains { (8...9).contains($0) })
        }
        let (frames, session) = try decodeAll(got)
        #expect(session?.statistics.decoded == got.count)
        for frame in frames { #expect(reference[frame.pts] == md5Hex(frame.pixelBuffer), "picture at \(frame.pts)") }
    }
}
