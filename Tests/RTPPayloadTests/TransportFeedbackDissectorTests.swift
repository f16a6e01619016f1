import FormatConv
// Transport-cc feedback, REMB and transport-wide sequence numbers checked against
// independent implementations: Wireshark's dissectors (tshark) reading a pcap the
// test writes, and aiortc writing an RTP packet with the extension and a REMB.
import Foundation
import MediaCore
import RTPPayload
import TestSupport
import Testing

struct TransportFeedbackDissectorTests {
    static let rtpPort: UInt16 = 40_000
    static let rtcpPort: UInt16 = 40_001

    /// A pcap (LINKTYPE_RAW: IPv4 datagrams) of UDP datagrams on 127.0.0.1, one per millisecond.
    static func pcap(_ datagrams: [(bytes: [UInt8], port: UInt16)]) -> Data {
        var file: [UInt8] = []
        func le32(_ value: UInt32) { file += withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        func le16(_ value: UInt16) { file += withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        le32(0xA1B2_C3D4)
        le16(2)
        le16(4)
        le32(0)
        le32(0)
        le32(65_535)
        le32(101)
        for (index, datagram) in datagrams.enumerated() {
            let udpLength = 8 + datagram.bytes.count
            var packet: [UInt8] = [
                0x45, 0, UInt8((20 + udpLength) >> 8), UInt8((20 + udpLength) & 0xFF), 0, 0, 0, 0, 64, 17,
            ]
            var checksum: UInt32 = 0
            let header = packet + [0, 0, 127, 0, 0, 1, 127, 0, 0, 1]
            for word in stride(from: 0, to: 20, by: 2) {
                checksum += UInt32(header[word]) << 8 | UInt32(header[word + 1])
            }
            while checksum > 0xFFFF { checksum = (checksum & 0xFFFF) + (checksum >> 16) }
            let sum = ~UInt16(checksum)
            packet += [UInt8(sum >> 8), UInt8(sum & 0xFF), 127, 0, 0, 1, 127, 0, 0, 1]
            let source = datagram.port + 10
            packet += [
                UInt8(source >> 8), UInt8(source & 0xFF), UInt8(datagram.port >> 8), UInt8(datagram.port & 0xFF),
            ]
            packet += [UInt8(udpLength >> 8), UInt8(udpLength & 0xFF), 0, 0] + datagram.bytes
            le32(UInt32(index / 1000))
            le32(UInt32(index % 1000) * 1000)
            le32(UInt32(packet.count))
            le32(UInt32(packet.count))
            file += packet
        }
        return Data(file)
    }

    /// tshark's reading of transport-cc feedback: per RTCP frame, the fields and the (sequence number, delta in µs)
    /// of each packet received.
    struct Dissected: Equatable {
        var base: Int
        var count: Int
        var reference: Int
        var feedbackCount: Int
        var received: [(Int, Int)]
        static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.base == rhs.base && lhs.count == rhs.count && lhs.reference == rhs.reference
                && lhs.feedbackCount == rhs.feedbackCount && lhs.received.map(\.0) == rhs.received.map(\.0)
                && lhs.received.map(\.1) == rhs.received.map(\.1)
        }
    }

    static func dissect(_ verbose: String) -> [Dissected] {
        var result: [Dissected] = []
        func number(_ line: Substring, after label: String) -> Int? {
            guard let range = line.range(of: label) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber || $0 == "-" })
        }
        for line in verbose.split(separator: "\n") {
            if let value = number(line, after: "Base Sequence Number: ") {
                result.append(Dissected(base: value, count: 0, reference: 0, feedbackCount: 0, received: []))
            } else if let value = number(line, after: "Packet Status Count: ") {
                result[result.count - 1].count = value
            } else if let value = number(line, after: "Reference Time: ") {
                result[result.count - 1].reference = value
            } else if let value = number(line, after: "Feedback Packets Count: ") {
                result[result.count - 1].feedbackCount = value
            } else if let sequence = number(line, after: "[seq: "), let range = line.range(of: "] ") {
                let milliseconds = Double(line[range.upperBound...].prefix { $0 != " " }) ?? .nan
                result[result.count - 1].received.append((sequence, Int((milliseconds * 1000).rounded())))
            }
        }
        return result
    }

    /// A sender and receiver session exchange a stream with losses and reordering (the receiver's feedback every
    /// 50 ms); the receiver's feedback packets, a generator's feedback across the 16-bit wrap, and a REMB are
    /// written to a pcap with the RTP packets: tshark reads the same fields, statuses and deltas as our parser, and
    /// the same transport-wide sequence numbers in the RTP packets' extension.
    @Test func tsharkReadsOurFeedbackAndSequenceNumbers() throws {
        guard findExecutable("tshark") != nil else {
            Issue.record("tshark is not installed (scripts/bootstrap installs it)")
            return
        }
        var sender = RTPSenderSession(
            configuration: .init(
                packetizer: .init(codec: .h264, ssrc: 0x5EED_0001, maximumPayloadSize: 200),
                retransmission: RTPRetransmission(payloadType: 97, ssrc: 0x5EED_0002),
                transportSequenceNumberExtensionID: 5))
        var configuration = RTPReceiverConfiguration(codec: .h264, payloadType: 96, ssrc: 0x7777)
        configuration.transportFeedback = .init(extensionID: 5)
        configuration.retransmission = RTPRetransmission(payloadType: 97)
        var receiver = RTPReceiverSession<String>(configuration: configuration)
        var pcap: [(bytes: [UInt8], port: UInt16)] = []
        var feedbackDatagrams: [[UInt8]] = []
        var delayed: [(Int, [UInt8])] = []
        var sentCount = 0
        // When each transport-wide number (the order of sending) reached the receiver, in µs.
        var arrivals: [Int: Int] = [:]
        for (index, sample) in try HandMadeH264.stream(frames: 20, gop: 10, sliceSize: 900).enumerated() {
            let now = ms(Int64(index) * 33)
            var packets = RTPSenderSessionTests.rtp(try sender.send(sample, at: now))
            if index % 4 == 0 { packets += RTPSenderSessionTests.rtp(sender.sendPadding(bytes: 400, at: now)) }
            for packet in packets {
                pcap.append((packet, Self.rtpPort))
                sentCount += 1
                // Every 7th packet lost, every 5th held back behind the next one (reordered).
                if sentCount % 7 == 0 { continue }
                if sentCount % 5 == 0 {
                    delayed.append((sentCount - 1, packet))
                    continue
                }
                arrivals[sentCount - 1] = (Int(index) * 33 + 5) * 1000
                for (number, _) in delayed { arrivals[number] = (Int(index) * 33 + 5) * 1000 }
                for arriving in [packet] + delayed.map(\.1) {
                    for case .rtcp(let datagram, _) in receiver.receiveRTP(arriving, from: "s", at: now + ms(5)) {
                        feedbackDatagrams.append(datagram)
                    }
                }
                delayed.removeAll()
            }
        }
        for case .rtcp(let datagram, _) in receiver.poll(at: ms(1000)) { feedbackDatagrams.append(datagram) }
        var ours: [RTCPTransportFeedback] = []
        for datagram in feedbackDatagrams {
            let parsed = try RTCPPacket.parseCompound(datagram).compactMap { try $0.transportFeedback() }
            if !parsed.isEmpty { pcap.append((datagram, Self.rtcpPort)) }
            ours += parsed
        }
        #expect(ours.count >= 10)
        // Feedback across the wrap, with a negative delta and a two-byte one.
        var generator = TransportFeedbackGenerator()
        for (number, time) in [(65_533, 1000), (65_535, 1001), (0, 999), (3, 1400)] as [(UInt16, Int64)] {
            generator.record(sequenceNumber: number, arrival: ms(time))
        }
        let wrapped = generator.makeFeedback(senderSSRC: 0x7777, mediaSSRC: 0x5EED_0001)
        ours += wrapped
        pcap.append((RTCPPacket.compound(wrapped.map(\.rtcpPacket)), Self.rtcpPort))
        let remb = RTCPReceiverEstimatedMaximumBitrate(senderSSRC: 0x7777, bitrate: 2_345_678, ssrcs: [0x5EED_0001])
        pcap.append((RTCPPacket.compound([remb.rtcpPacket]), Self.rtcpPort))

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("twcc-\(UUID().uuidString).pcap")
        try Self.pcap(pcap).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let decode = ["-d", "udp.port==\(Self.rtpPort),rtp", "-d", "udp.port==\(Self.rtcpPort),rtcp"]
        let verbose = String(
            decoding: try runChecked("tshark", ["-r", file.path] + decode + ["-Y", "rtcp.rtpfb.fmt == 15", "-V"]),
            as: UTF8.self)
        let expected = ours.map { feedback in
            var received: [(Int, Int)] = []
            for (offset, status) in feedback.packets.enumerated() {
                if case .received(let delta) = status {
                    received.append((Int(feedback.baseSequenceNumber &+ UInt16(offset)), Int(delta) * 250))
                }
            }
            return Dissected(
                base: Int(feedback.baseSequenceNumber), count: feedback.packets.count,
                reference: Int(feedback.referenceTime), feedbackCount: Int(feedback.feedbackPacketCount),
                received: received)
        }
        let theirs = Self.dissect(verbose)
        #expect(theirs.count == expected.count)
        for (their, our) in zip(theirs, expected) { #expect(their == our) }
        #expect(!verbose.contains("Too many packet chunks"))
        // What tshark reads matches what happened: each packet received at the time it arrived (reference time plus
        // the deltas), the lost ones never reported received.
        var reportedReceived = Set<Int>()
        for frame in theirs.dropLast() {
            var time = frame.reference * 64_000
            for (number, delta) in frame.received {
                time += delta
                #expect(time == arrivals[number], "transport-wide number \(number)")
                reportedReceived.insert(number)
            }
        }
        #expect(reportedReceived == Set(arrivals.keys))
        #expect(arrivals.count < sentCount)

        let rembFields = String(
            decoding: try runChecked(
                "tshark",
                ["-r", file.path] + decode + [
                    "-Y", "rtcp.psfb.fmt == 15", "-T", "fields", "-e", "rtcp.psfb.remb.fci.br_exp", "-e",
                    "rtcp.psfb.remb.fci.br_mantissa", "-e", "rtcp.psfb.remb.fci.ssrc",
                ]), as: UTF8.self
        ).split(separator: "\t").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(rembFields.count == 3)
        let reread = try RTCPPacket.parseCompound(RTCPPacket.compound([remb.rtcpPacket]))[0]
            .receiverEstimatedMaximumBitrate()!
        #expect(UInt64(rembFields[1])! << UInt64(rembFields[0])! == reread.bitrate)
        #expect(rembFields[2] == "0x5eed0001")

        let rtpFields = String(
            decoding: try runChecked(
                "tshark",
                ["-r", file.path] + decode + [
                    "-Y", "rtp", "-T", "fields", "-e", "rtp.ext.rfc5285.id", "-e", "rtp.ext.rfc5285.data",
                ]), as: UTF8.self
        ).split(separator: "\n")
        let sequenceNumbers = rtpFields.map { line -> UInt16? in
            let fields = line.split(separator: "\t")
            guard fields.count == 2, fields[0] == "5" else { return nil }
            return UInt16(fields[1], radix: 16)
        }
        #expect(sequenceNumbers.count == sentCount)
        #expect(sequenceNumbers == (0..<sentCount).map { UInt16($0) })
    }

    /// aiortc (an independent WebRTC stack) writes an RTP packet with the transport-wide sequence number extension
    /// and a REMB; we read the number and the bit rate aiortc itself decodes.
    @Test func aiortcPacketsParse() throws {
        let script = """
            from aiortc import rtp
            from aiortc.rtcrtpparameters import RTCRtpHeaderExtensionParameters as X
            m = rtp.HeaderExtensionsMap()
            m.configure(type("P", (), {"headerExtensions": [X(id=5, uri="\(TransportWideSequenceNumber.extensionURI)")]})())
            p = rtp.RtpPacket(payload_type=96, sequence_number=7, timestamp=1000, ssrc=0x5EED, payload=b"\\x65\\x00")
            p.extensions.transport_sequence_number = 0xBEEF
            print(p.serialize(m).hex())
            fci = rtp.pack_remb_fci(1500000, [0x5EED])
            print(bytes(rtp.RtcpPsfbPacket(fmt=15, ssrc=1, media_ssrc=0, fci=fci)).hex())
            print(rtp.unpack_remb_fci(fci)[0])
            """
        let result = try runProcess("/usr/bin/python3", ["-c", script])
        guard result.status == 0 else {
            Issue.record("aiortc did not run: \(result.stderr.suffix(500))")
            return
        }
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        func bytes(_ hex: String) -> [UInt8] {
            stride(from: 0, to: hex.count, by: 2).map {
                UInt8(
                    hex[hex.index(hex.startIndex, offsetBy: $0)..<hex.index(hex.startIndex, offsetBy: $0 + 2)],
                    radix: 16)!
            }
        }
        let (header, payload) = try RTPHeader.parse(bytes(lines[0]))
        #expect(header.transportSequenceNumber(extensionID: 5) == 0xBEEF)
        #expect(payload.count == 2)
        let remb = try RTCPPacket.parseCompound(bytes(lines[1]))[0].receiverEstimatedMaximumBitrate()
        #expect(remb?.bitrate == UInt64(lines[2]))
        #expect(remb?.ssrcs == [0x5EED])
    }
}
