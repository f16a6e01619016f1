import FormatConv
import MediaCore
import RTPPayload
import TestSupport
import Testing

/// CONFORMANCE.md, "RTP payload", cases 20 to 27: one test each. Expected
/// byte layouts are written out by hand from RFC 6184 / RFC 7798.
struct RTPConformanceTests {
    static let h264 = RTPDepacketizer.Configuration(codec: .h264)

    /// Packets of a hand-made stream: keyframe at 0 and `gop`, P frames
    /// between, each slice fragmented into FU-A packets of at most `bound`.
    static func fragmentedStream(frames: Int = 8, gop: Int = 4, sliceSize: Int = 100, bound: Int = 40) throws
        -> (samples: [CompressedSample], packets: [[UInt8]])
    {
        let samples = try HandMadeH264.stream(frames: frames, gop: gop, sliceSize: sliceSize)
        let packets = try packetizeAll(
            samples, RTPPacketizer.Configuration(codec: .h264, ssrc: 1, maximumPayloadSize: bound))
        return (samples, packets)
    }

    // MARK: 20

    @Test func case20_fragmentReassemblyStartsAtTheStartBitAndALostFragmentDiscardsTheUnit() throws {
        // The FU-A layout (RFC 6184 5.8): FU indicator F|NRI|28, FU header
        // S|E|R|type, then the NAL unit's bytes after its header.
        let nal = HandMadeH264.pSlice(size: 10, fill: 0x33)
        let sample = try HandMadeH264.sample([nal], index: 1, keyframe: false)
        var packetizer = RTPPacketizer(
            configuration: RTPPacketizer.Configuration(codec: .h264, ssrc: 1, maximumPayloadSize: 8))
        let packets = try packetizer.packetize(sample).map { try split($0).payload }
        #expect(packets == [[0x5C, 0x81, 0x9A, 0x33, 0x33, 0x33, 0x33, 0x33], [0x5C, 0x41, 0x33, 0x33, 0x33]])

        // Clean: every sample back. Then drop the start, a middle or the end
        // fragment of the P frame at index 1 (packets 5...8 of the stream).
        let (samples, stream) = try Self.fragmentedStream()
        let clean = emitted(depacketizeAll(stream, Self.h264).outputs)
        #expect(clean.map(\.data) == samples.map(\.data))
        let firstOfFrame1 = try #require(stream.firstIndex { try split($0).header.timestamp == 3600 })
        let lastOfFrame1 = try #require(stream.lastIndex { try split($0).header.timestamp == 3600 })
        #expect(lastOfFrame1 - firstOfFrame1 >= 2)
        for missing in [firstOfFrame1, firstOfFrame1 + 1, lastOfFrame1] {
            var damaged = stream
            damaged.remove(at: missing)
            let (outputs, statistics) = depacketizeAll(damaged, Self.h264)
            let got = emitted(outputs)
            // Frame 0 and the keyframe at 4 onwards; frames 1 to 3 dropped.
            #expect(got.map(\.data) == [samples[0]].map(\.data) + samples[4...].map(\.data), "missing \(missing)")
            #expect(statistics.lost == 1)
            #expect(statistics.droppedAccessUnitCount == 3)
            // The damaged unit (and, when the lost packet may have begun the
            // next one, that too) as lost; the rest wait for the keyframe.
            let reasons = dropReports(outputs).map(\.reason)
            #expect([.packetLoss, .incompleteFragment].contains(reasons.first), "missing \(missing)")
            #expect(reasons.last == .waitingForKeyframe, "missing \(missing)")
        }
        // A receiver whose first packet is a middle fragment makes nothing of
        // it: no NAL header is taken from a later fragment.
        let (outputs, statistics) = depacketizeAll(Array(stream[(firstOfFrame1 + 1)...]), Self.h264)
        #expect(dropReports(outputs).first?.reason == .incompleteFragment)
        #expect(emitted(outputs).map(\.data) == samples[4...].map(\.data))
        #expect(statistics.lost == 0)
    }

    // MARK: 21

    @Test func case21_aJoiningReceiverWaitsForAKeyframeWithItsParameterSets() throws {
        let (samples, stream) = try Self.fragmentedStream(frames: 12, gop: 6)
        // Join in the middle of frame 2's fragments.
        let start = try #require(stream.firstIndex { try split($0).header.timestamp == 7200 }) + 1
        let (outputs, _) = depacketizeAll(Array(stream[start...]), Self.h264)
        let got = emitted(outputs)
        #expect(got.first?.isKeyframe == true)
        #expect(got.map(\.data) == samples[6...].map(\.data))
        let reasons = dropReports(outputs).map(\.reason)
        #expect(reasons == [.incompleteFragment, .waitingForKeyframe, .waitingForKeyframe, .waitingForKeyframe])

        // Without parameter sets in band, the keyframe waits for them (here:
        // none ever come), and is reported; with the SDP's, it is emitted.
        let bare = try packetizeAll(
            samples, RTPPacketizer.Configuration(codec: .h264, ssrc: 1, parameterSets: .never))
        let (unknown, unknownStatistics) = depacketizeAll(bare, Self.h264)
        #expect(emitted(unknown).isEmpty)
        #expect(unknownStatistics.droppedAccessUnits[.missingParameterSets] == 2)
        var withSDP = Self.h264
        withSDP.parameterSets = [HandMadeH264.sps, HandMadeH264.pps]
        #expect(emitted(depacketizeAll(bare, withSDP).outputs).map(\.data) == samples.map(\.data))

        // After a loss: the whole of frame 8 is lost; 8 to 11 are skipped.
        let lostFrame = try stream.indices.filter { try split(stream[$0]).header.timestamp == 8 * 3600 }
        let afterLoss = stream.indices.filter { !lostFrame.contains($0) }.map { stream[$0] }
        let (lossy, lossyStatistics) = depacketizeAll(afterLoss, Self.h264)
        #expect(emitted(lossy).map(\.data) == samples[0..<8].map(\.data))
        #expect(lossEvents(lossy) == [RTPLossEvent(firstSequenceNumber: UInt16(lostFrame[0]), count: lostFrame.count)])
        #expect(lossyStatistics.droppedAccessUnitCount == 3)
    }

    // MARK: 22

    @Test func case22_parameterSetsAreCachedFromEveryPacketTypeAndFromTheSDP() throws {
        let keyframe = try HandMadeH264.sample([HandMadeH264.idr()], index: 0, keyframe: true)
        let sps = HandMadeH264.sps
        let pps = HandMadeH264.pps
        let idr = HandMadeH264.idr()
        // Hand-made packets: single NAL units; a STAP-A; FU-A fragments.
        let single = [
            handPacket(sequenceNumber: 1, timestamp: 0, payload: sps),
            handPacket(sequenceNumber: 2, timestamp: 0, payload: pps),
            handPacket(sequenceNumber: 3, timestamp: 0, marker: true, payload: idr),
        ]
        let stapA = [
            handPacket(
                sequenceNumber: 1, timestamp: 0,
                payload: [0x78, 0, UInt8(sps.count)] + sps + [0, UInt8(pps.count)] + pps),
            handPacket(sequenceNumber: 2, timestamp: 0, marker: true, payload: idr),
        ]
        let fragments = [
            handPacket(sequenceNumber: 1, timestamp: 0, payload: [0x7C, 0x87] + sps[1..<12]),
            handPacket(sequenceNumber: 2, timestamp: 0, payload: [0x7C, 0x07] + sps[12..<20]),
            handPacket(sequenceNumber: 3, timestamp: 0, payload: [0x7C, 0x47] + sps[20...]),
            handPacket(sequenceNumber: 4, timestamp: 0, payload: [0x7C, 0x88] + pps[1..<4]),
            handPacket(sequenceNumber: 5, timestamp: 0, payload: [0x7C, 0x48] + pps[4...]),
            handPacket(sequenceNumber: 6, timestamp: 0, marker: true, payload: idr),
        ]
        for (name, packets) in [("single", single), ("STAP-A", stapA), ("FU-A", fragments)] {
            let got = emitted(depacketizeAll(packets, Self.h264).outputs)
            #expect(got.count == 1, "\(name)")
            #expect(got.first?.formatDescription.parameterSets == [sps, pps], "\(name)")
            #expect(got.first?.data == keyframe.data, "\(name)")
        }
        // The SDP: a sprop value holding start codes is split at them.
        let withStartCodes = Base64.encode([0, 0, 0, 1] + sps + [0, 0, 1] + pps)
        let sdp = try RTPSessionDescription(
            parsing: "v=0\r\nc=IN IP4 127.0.0.1\r\nm=video 5004 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n"
                + "a=fmtp:96 packetization-mode=1;sprop-parameter-sets=\(withStartCodes)\r\n")
        #expect(sdp.parameterSets == [sps, pps])
        let onlySlice = [handPacket(sequenceNumber: 9, timestamp: 0, marker: true, payload: idr)]
        var configuration = Self.h264
        configuration.parameterSets = sdp.parameterSets
        let got = emitted(depacketizeAll(onlySlice, configuration).outputs)
        #expect(got.first?.formatDescription.parameterSets == [sps, pps])
        // Written sprop values never carry start codes.
        let written = RTPSessionDescription(formatDescription: try HandMadeH264.description, address: "::1", port: 1)
        let value = try #require(written.formatParameters.first { $0.name == "sprop-parameter-sets" }).value
        #expect(try value.split(separator: ",").map { try Base64.decode($0) } == [sps, pps])
    }

    // MARK: 23

    @Test func case23_parameterSetsGoInOneAggregationPacketBeforeTheKeyframe() throws {
        let sps = HandMadeH264.sps
        let pps = HandMadeH264.pps
        let idr = HandMadeH264.idr(size: 50)
        let keyframe = try HandMadeH264.sample([idr], index: 3, keyframe: true)
        var packetizer = RTPPacketizer(configuration: RTPPacketizer.Configuration(codec: .h264, ssrc: 7))
        let packets = try packetizer.packetize(keyframe).map { try split($0) }
        #expect(packets.count == 2)
        // STAP-A: F=0, NRI=3 (the largest), type 24; each unit after its size.
        #expect(packets[0].payload == [0x78, 0x00, 0x19] + sps + [0x00, 0x07] + pps)
        #expect(packets.map(\.header.timestamp) == [3 * 3600, 3 * 3600])
        #expect(packets.map(\.header.marker) == [false, true])
        #expect(packets[1].payload == idr)

        // HEVC AP (RFC 7798 4.4.2): payload header type 48, LayerId 0, TID 1.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let hevc = try RTPTestStreams.encode(.hevc, frames: 2, in: directory)
        var hevcPacketizer = RTPPacketizer(configuration: RTPPacketizer.Configuration(codec: .hevc, ssrc: 7))
        let first = try split(try hevcPacketizer.packetize(hevc.samples[0])[0])
        let sets = hevc.samples[0].formatDescription.parameterSets
        #expect(sets.count == 3)
        var expected: [UInt8] = [0x60, 0x01]
        for nal in sets { expected += [UInt8(nal.count >> 8), UInt8(nal.count & 0xFF)] + nal }
        #expect(first.payload == expected)

        // Mode 0: single NAL unit packets only, the sets one by one; a NAL
        // unit over the bound is an error naming the slice-size setting.
        var modeZero = RTPPacketizer(
            configuration: RTPPacketizer.Configuration(
                codec: .h264, ssrc: 7, maximumPayloadSize: 60, packetizationMode: .singleNALUnit,
                aggregation: .maximal))
        let small = try modeZero.packetize(keyframe).map { try split($0).payload }
        #expect(small == [sps, pps, idr])
        let big = try HandMadeH264.sample([HandMadeH264.idr(size: 61)], index: 4, keyframe: true)
        let sequenceBefore = modeZero.nextSequenceNumber
        do {
            _ = try modeZero.packetize(big)
            Issue.record("a 61-byte NAL unit over a 60-byte bound was packetized in mode 0")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("slice-max-size") && error.message.contains("61 bytes"))
        }
        #expect(modeZero.nextSequenceNumber == sequenceBefore)
    }

    // MARK: 24

    @Test func case24_markerTimestampsAndSequenceWrap() throws {
        let samples = try HandMadeH264.stream(frames: 20, gop: 10, sliceSize: 90)
        let configuration = RTPPacketizer.Configuration(
            codec: .h264, ssrc: 9, initialSequenceNumber: 65_530, timestampOffset: 0xFFFF_F000, maximumPayloadSize: 40)
        let packets = try packetizeAll(samples, configuration).map { try split($0) }
        var bySample: [UInt32: [RTPHeader]] = [:]
        for packet in packets { bySample[packet.header.timestamp, default: []].append(packet.header) }
        #expect(bySample.count == samples.count)
        for (index, _) in samples.enumerated() {
            // 90 kHz: frame n of 25 fps at n × 3600, plus the offset (wrapping).
            let timestamp = UInt32(index * 3600) &+ 0xFFFF_F000
            let headers = try #require(bySample[timestamp])
            #expect(headers.map(\.marker) == Array(repeating: false, count: headers.count - 1) + [true])
        }
        let sequence = packets.map(\.header.sequenceNumber)
        #expect(sequence.first == 65_530)
        #expect(zip(sequence, sequence.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
        #expect(sequence.contains(65_535) && sequence.contains(0))
        let (outputs, statistics) = depacketizeAll(packets.map { $0.header.packet(payload: $0.payload) }, Self.h264)
        #expect(statistics.lost == 0)
        #expect(lossEvents(outputs).isEmpty)
        let got = emitted(outputs)
        #expect(got.map(\.data) == samples.map(\.data))
        // pts is relative to the first packet and unwraps past 2³².
        #expect(got.map(\.pts) == samples.map(\.pts))
    }

    // MARK: 25

    @Test func case25_hevcDecodingOrderNumbers() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stream = try RTPTestStreams.encode(.hevc, frames: 3, in: directory)
        let sample = stream.samples[0]
        let nals = try LengthPrefixed.nalUnits(in: sample.data, lengthSize: 4, codec: .hevc).map { Array($0) }
        #expect(nals.count == 2)  // x265 writes a prefix SEI with the first picture
        let sets = sample.formatDescription.parameterSets

        // With sprop-max-don-diff 0: no DON fields, payload == NAL unit.
        var plain = RTPPacketizer(
            configuration: RTPPacketizer.Configuration(
                codec: .hevc, ssrc: 1, maximumPayloadSize: 60_000, aggregation: .none, parameterSets: .never))
        #expect(try plain.packetize(sample).map { try split($0).payload } == nals)

        // With 1: DONL after the payload header of single NAL unit packets,
        // DONL before the first AP unit and DOND before the others, DONL in
        // the first FU only. The bound fits the SEI (x265's version and
        // options, a few kB) with its DONL, not the slice.
        let sei = nals[0]
        let slice = nals[1]
        let bound = sei.count + 2
        #expect(slice.count > bound)
        var don = RTPPacketizer(
            configuration: RTPPacketizer.Configuration(
                codec: .hevc, ssrc: 1, maximumPayloadSize: bound, aggregation: .none, maximumDONDifference: 1))
        let payloads = try don.packetize(sample).map { try split($0).payload }
        var expectedAP: [UInt8] = [0x60, 0x01, 0x00, 0x00]
        for (index, nal) in sets.enumerated() {
            if index > 0 { expectedAP.append(0x00) }
            expectedAP += [UInt8(nal.count >> 8), UInt8(nal.count & 0xFF)] + nal
        }
        #expect(payloads[0] == expectedAP)
        #expect(payloads[1] == Array(sei[0..<2]) + [0x00, 0x03] + sei[2...])
        // FU: payload header type 49 with the slice's F, LayerId and TID;
        // FU header S + type; DONL 4 (three sets and the SEI came first).
        let sliceType = (slice[0] >> 1) & 0x3F
        #expect(Array(payloads[2][0..<5]) == [0x62, slice[1], 0x80 | sliceType, 0x00, 0x04])
        #expect(Array(payloads[2][5...]) == Array(slice[2..<(2 + payloads[2].count - 5)]))
        // The next fragment: no start bit, no DONL, the bytes that follow.
        #expect(Array(payloads[3][0..<2]) == [0x62, slice[1]] && payloads[3][2] & 0xBF == sliceType)
        let continued = 2 + payloads[2].count - 5
        #expect(Array(payloads[3][3...]) == Array(slice[continued..<(continued + payloads[3].count - 3)]))

        // The depacketizer orders by DON: send the SEI's packet after the
        // slice's fragments (sequence numbers in transmission order).
        var fresh = RTPPacketizer(
            configuration: RTPPacketizer.Configuration(
                codec: .hevc, ssrc: 1, maximumPayloadSize: bound, aggregation: .none, maximumDONDifference: 1))
        let reordered = try fresh.packetize(stream.samples[0]).map { try split($0) }
        var transmission = [reordered[0]] + reordered[2...] + [reordered[1]]
        for index in transmission.indices {
            transmission[index].header.sequenceNumber = UInt16(index)
            transmission[index].header.marker = index == transmission.count - 1
        }
        var configuration = RTPDepacketizer.Configuration(codec: .hevc, maximumDONDifference: 1)
        let received = depacketizeAll(
            transmission.map { $0.header.packet(payload: $0.payload) }, configuration)
        #expect(emitted(received.outputs).map(\.data) == [sample.data])
        // Without DON handling the same bytes would not be read as HEVC.
        configuration.maximumDONDifference = 0
        #expect(
            emitted(
                depacketizeAll(transmission.map { $0.header.packet(payload: $0.payload) }, configuration)
                    .outputs
            ).map(\.data) != [sample.data])
    }

    // MARK: 26

    @Test func case26_duplicatesAndReorderingGiveTheCleanStreamAndABadSTAPADropsOnlyItsUnit() throws {
        let (samples, stream) = try Self.fragmentedStream(frames: 30, gop: 10, sliceSize: 120)
        for seed in UInt64(1)...4 {
            var faults = PacketFaultInjector(
                seed: seed, duplicateProbability: 0.2, reorderProbability: 0.2, reorderDistance: 4)
            var delivered: [[UInt8]] = []
            for packet in stream { delivered += faults.process(packet) }
            delivered += faults.flush()
            var configuration = Self.h264
            configuration.reorderWindow = 8
            let (outputs, statistics) = depacketizeAll(delivered, configuration)
            #expect(emitted(outputs).map(\.data) == samples.map(\.data), "seed \(seed)")
            #expect(statistics.duplicates == faults.statistics.duplicated, "seed \(seed)")
            #expect(statistics.lost == 0 && statistics.late == 0, "seed \(seed)")
            #expect(statistics.reordered > 0, "seed \(seed)")
            #expect(dropReports(outputs).isEmpty)
        }
        // A STAP-A of frame 12 (SEI + slice) whose second size runs past the
        // packet: that unit goes, 13 to 19 wait for the keyframe at 20.
        let sei: [UInt8] = [0x06, 0x05, 0x01, 0xAA, 0x80]
        let slice = HandMadeH264.pSlice(size: 20, fill: 0x12)
        let damaged = handPacket(
            sequenceNumber: 500, timestamp: 12 * 3600, marker: true,
            payload: [0x58, 0x00, UInt8(sei.count)] + sei + [0x00, 0xFF] + slice)
        var packets = try stream.map { try split($0) }
        let index = try #require(packets.firstIndex { $0.header.timestamp == 12 * 3600 })
        packets.removeAll { $0.header.timestamp == 12 * 3600 }
        var headers = packets.map { $0.header.packet(payload: $0.payload) }
        headers.insert(damaged, at: index)
        for position in headers.indices {
            headers[position][2] = UInt8(position >> 8)
            headers[position][3] = UInt8(position & 0xFF)
        }
        let (outputs, statistics) = depacketizeAll(headers, Self.h264)
        let reports = dropReports(outputs)
        #expect(reports.first?.reason == .malformedPacket)
        #expect(reports.first?.message.contains("runs past the end") == true)
        #expect(statistics.droppedPackets[.malformedPacket] == 1)
        #expect(statistics.droppedAccessUnits[.packetLoss] == 1)
        #expect(statistics.droppedAccessUnits[.waitingForKeyframe] == 7)
        #expect(emitted(outputs).map(\.data) == samples[0..<12].map(\.data) + samples[20...].map(\.data))
    }

    // MARK: 27

    @Test func case27_interleavedTypesAreRefusedByNameAndReservedTypesIgnored() throws {
        let idr = HandMadeH264.idr()
        let keyframe = [
            handPacket(
                sequenceNumber: 1, timestamp: 0,
                payload: [0x78, 0, 25] + HandMadeH264.sps + [0, 7] + HandMadeH264.pps),
            handPacket(sequenceNumber: 2, timestamp: 0, marker: true, payload: idr),
        ]
        let refused: [(type: UInt8, name: String)] = [
            (25, "STAP-B"), (26, "MTAP16"), (27, "MTAP24"), (29, "FU-B"),
        ]
        for (type, name) in refused {
            let packet = handPacket(sequenceNumber: 3, timestamp: 3600, payload: [0x60 | type, 0, 1, 2, 3])
            let next = handPacket(
                sequenceNumber: 4, timestamp: 3600, marker: true, payload: HandMadeH264.pSlice())
            let (outputs, statistics) = depacketizeAll(keyframe + [packet, next], Self.h264)
            let report = try #require(dropReports(outputs).first)
            #expect(report.reason == .unsupportedPacketType)
            #expect(report.message.contains(name) && report.message.contains("type \(type)"))
            #expect(statistics.droppedPackets[.unsupportedPacketType] == 1)
            // The access unit it belonged to is incomplete: dropped, not emitted.
            #expect(emitted(outputs).count == 1)
        }
        // Reserved 0, 30, 31: ignored and counted; the stream is unharmed.
        let reserved = [UInt8(0), 30, 31].enumerated().map { offset, type in
            handPacket(sequenceNumber: UInt16(3 + offset), timestamp: 3600, payload: [type, 9, 9])
        }
        let next = handPacket(sequenceNumber: 6, timestamp: 3600, marker: true, payload: HandMadeH264.pSlice())
        let (outputs, statistics) = depacketizeAll(keyframe + reserved + [next], Self.h264)
        #expect(statistics.reservedTypesIgnored == 3)
        #expect(dropReports(outputs).isEmpty)
        #expect(emitted(outputs).map(\.data).last == (try LengthPrefixed.write([HandMadeH264.pSlice()], lengthSize: 4)))

        // HEVC PACI (50).
        let paci = handPacket(sequenceNumber: 1, timestamp: 0, marker: true, payload: [50 << 1, 1, 0, 0, 0])
        let (hevcOutputs, _) = depacketizeAll([paci], RTPDepacketizer.Configuration(codec: .hevc))
        let report = try #require(dropReports(hevcOutputs).first)
        #expect(report.reason == .unsupportedPacketType && report.message.contains("PACI"))
    }
}
