// RTPStreamSender with congestion control: a retransmission leaves before the media waiting in the pacer, and the
// transport-wide sequence numbers on the wire grow in the order the packets leave.
import CongestionControl
import FormatConv
import MediaCore
import MediaIO
import RTPPayload
import Sockets
import Testing

struct RTPStreamSenderRetransmissionPriorityTests {
    /// What reached the destination: a media packet by its sequence number, or an RTX packet by the original
    /// sequence number it carries (RFC 4588: the payload's first two bytes).
    enum Arrival: Equatable, CustomStringConvertible {
        case media(UInt16)
        case retransmission(UInt16)

        var description: String {
            switch self {
            case .media(let number): "media \(number)"
            case .retransmission(let number): "RTX of \(number)"
            }
        }
    }

    static let mediaSSRC: UInt32 = 0x5EED
    static let rtxSSRC: UInt32 = 0x0A7C

    /// A keyframe of one IDR slice of `size` bytes (filler after the slice header) with `template`'s parameter
    /// sets.
    static func keyframe(size: Int, index: Int, like template: CompressedSample) throws -> CompressedSample {
        let slice: [UInt8] = [0x65, 0x88, 0x80] + [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: size - 3)
        return CompressedSample(
            data: try LengthPrefixed.write([slice], lengthSize: 4), formatDescription: template.formatDescription,
            pts: MediaTime(value: Int64(index), timescale: 30), dts: MediaTime(value: Int64(index), timescale: 30),
            duration: MediaTime(value: 1, timescale: 30), isKeyframe: true)
    }

    /// Reads every datagram waiting on `socket` (each waited for up to `timeout`).
    static func read(_ socket: UDPSocket, timeout: Duration) throws -> [[UInt8]] {
        var buffer = [UInt8](repeating: 0, count: 2048)
        var datagrams: [[UInt8]] = []
        while let (count, _) = try socket.receive(into: &buffer, timeout: timeout) {
            datagrams.append(Array(buffer[..<count]))
        }
        return datagrams
    }

    /// A small keyframe leaves (two packets, 100 and 101); a NACK for 101 is waiting when a 100 KB keyframe is
    /// queued in the pacer (0.8 s of it at the 1 Mb/s pacing rate). The RTX answer leaves before every packet of
    /// the big keyframe: the destination gets media 100, 101, the RTX of 101, then media 102… in order. (With one
    /// first-in-first-out class it waited behind the keyframe, or was not sent at all because the queue held more
    /// than 100 ms.) The transport-wide sequence numbers, taken as packets leave, arrive as 0, 1, 2, … with none
    /// out of order, and the controller heard of every packet.
    @Test func aRetransmissionLeavesBeforeAQueuedKeyframe() throws {
        let encoded = try StreamFeedbackTests.samples()
        let destination = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        var congestion = CongestionControlConfiguration(startRate: 1_000_000, maximumRate: 5_000_000)
        congestion.pacingFactor = 1
        congestion.probing = false
        let sender = try RTPStreamSender(
            host: "127.0.0.1", port: Int(destination.localAddress.port),
            configuration: .init(
                packetizer: .init(codec: .h264, ssrc: Self.mediaSSRC, initialSequenceNumber: 100),
                retransmission: RTPRetransmission(payloadType: 97, ssrc: Self.rtxSSRC, initialSequenceNumber: 500)),
            congestionControl: congestion)

        _ = try sender.send(try Self.keyframe(size: 300, index: 0, like: encoded[0]))
        try sender.pace(for: 0.05)
        var datagrams = try Self.read(destination, timeout: .milliseconds(50))
        #expect(datagrams.count == 2)

        let peer = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        try peer.send(
            RTCPPacket.compound([
                .receiverReport(ssrc: 0xFEED, reports: []),
                .genericNACK(senderSSRC: 0xFEED, mediaSSRC: Self.mediaSSRC, sequenceNumbers: [101]),
            ]), to: sender.localAddresses.rtcp)
        _ = try sender.send(try Self.keyframe(size: 100_000, index: 1, like: encoded[0]))
        // Until the pacer is empty (0.8 s at its rate), or a generous bound.
        for _ in 0..<1000 {
            try sender.pace(for: 0.01)
            datagrams += try Self.read(destination, timeout: .zero)
            if sender.congestionStatistics?.queuedPackets == 0 { break }
        }
        datagrams += try Self.read(destination, timeout: .milliseconds(50))

        var arrivals: [Arrival] = []
        var transportNumbers: [UInt16] = []
        for datagram in datagrams {
            let (header, payload) = try RTPHeader.parse(datagram)
            if header.ssrc == Self.rtxSSRC {
                arrivals.append(
                    .retransmission(
                        UInt16(datagram[payload.lowerBound]) << 8 | UInt16(datagram[payload.lowerBound + 1])))
            } else {
                #expect(header.ssrc == Self.mediaSSRC)
                arrivals.append(.media(header.sequenceNumber))
            }
            transportNumbers.append(
                try #require(
                    header.transportSequenceNumber(
                        extensionID: RTPStreamSender.defaultTransportSequenceNumberExtensionID)))
        }
        let mediaCount = arrivals.filter { if case .media = $0 { true } else { false } }.count
        // 100 000 bytes of slice in packets of at most 1200 bytes of payload: more than 80 of them.
        #expect(mediaCount > 80)
        let expected: [Arrival] =
            [.media(100), .media(101), .retransmission(101)] + (102..<100 + mediaCount).map { .media(UInt16($0)) }
        #expect(arrivals == expected, "\(arrivals.prefix(8))")
        #expect(transportNumbers == (0..<datagrams.count).map { UInt16($0) })
        #expect(sender.statistics.retransmittedPacketsSent == 1)
        let stats = try #require(sender.congestionStatistics)
        #expect(stats.retransmissionsSkipped == 0)
        #expect(stats.packetsOutOfOrder == 0)
        #expect(stats.controller.packetsSent == datagrams.count)
    }
}
