// RTPStreamSender answers a NACK that arrives while it paces with one retransmission, not two.
import MediaCore
import MediaIO
import RTPPayload
import Sockets
import Testing

struct RTPStreamSenderNACKOnceTests {
    /// One sample goes out in some packets; a NACK for its first packet comes while the sender paces: exactly one
    /// more datagram (the retransmission) reaches the destination, and the session counted one. (The replies to
    /// feedback read during a wait were sent a second time with the timers' packets.)
    @Test func aNACKReadWhilePacingIsAnsweredOnce() throws {
        let samples = try StreamFeedbackTests.samples()
        let destination = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        let sender = try RTPStreamSender(
            host: "127.0.0.1", port: Int(destination.localAddress.port),
            configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x5EED, initialSequenceNumber: 100)))
        _ = try sender.send(samples[0])
        let packets = sender.statistics.packetsSent
        let peer = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        try peer.send(
            RTCPPacket.compound([
                .receiverReport(ssrc: 0xFEED, reports: []),
                .genericNACK(senderSSRC: 0xFEED, mediaSSRC: 0x5EED, sequenceNumbers: [100]),
            ]), to: sender.localAddresses.rtcp)
        try sender.pace(for: 0.2)
        var buffer = [UInt8](repeating: 0, count: 2048)
        var received = 0
        var firstPacketCopies = 0
        while let (count, _) = try destination.receive(into: &buffer, timeout: .milliseconds(100)) {
            received += 1
            if count >= 4, buffer[2] == 0, buffer[3] == 100 { firstPacketCopies += 1 }
        }
        #expect(sender.statistics.retransmittedPacketsSent == 1)
        #expect(received == packets + 1)
        #expect(firstPacketCopies == 2)
    }
}
