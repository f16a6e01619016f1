import MediaCore
import MediaIO
import RTPPayload
import TestSupport
import Testing

/// `RTPStreamReceiver.summary`: the one line of what a receiver saw, its
/// packet count checked against the datagrams that reached its socket.
struct RTPStreamReceiverSummaryTests {
    /// Sends `samples` to a new receiver (dropping `dropProbability` of the
    /// packets on purpose) and receives until every sample is back or 2 s
    /// passed; the receiver and the RTP datagrams that reached it.
    private static func receive(dropProbability: Double) throws -> (receiver: RTPStreamReceiver, datagrams: Int) {
        let samples = try StreamFeedbackTests.samples()
        let injector = dropProbability > 0 ? PacketFaultInjector(seed: 1, dropProbability: dropProbability) : nil
        let receiver = try RTPStreamReceiver(
            host: "127.0.0.1", port: 0, configuration: .init(codec: .h264, nack: nil), faultInjector: injector)
        var datagrams = 0
        receiver.packetArrived = { _ in datagrams += 1 }
        let sender = try RTPStreamSender(
            host: "127.0.0.1", port: receiver.port, configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x5EED)))
        for sample in samples { _ = try sender.send(sample) }
        var received = 0
        for _ in 0..<40 where received < samples.count {
            for event in try receiver.receive(waiting: 0.05) { if case .sample = event { received += 1 } }
        }
        for event in try receiver.finish() { if case .sample = event { received += 1 } }
        return (receiver, datagrams)
    }

    @Test func everyPacketArrived() throws {
        let (receiver, datagrams) = try Self.receive(dropProbability: 0)
        #expect(datagrams >= 4)
        #expect(
            receiver.summary == "received \(datagrams) packets, 4 access units; 0 packets lost, 0 duplicates, 0 late")
    }

    @Test func everyPacketDroppedOnPurposeIsSaid() throws {
        let (receiver, datagrams) = try Self.receive(dropProbability: 1)
        #expect(datagrams >= 4)
        #expect(
            receiver.summary
                == "received 0 packets, 0 access units; 0 packets lost, 0 duplicates, 0 late; "
                + "dropped \(datagrams) packets on purpose")
    }
}
