import MediaIO
import RTPPayload
import Testing

/// ``RTPStreamSender`` binds its RTP and RTCP sockets to the local address
/// that reaches the destination, not to every interface.
struct RTPStreamSenderBindTests {
    @Test(arguments: ["127.0.0.1", "::1"])
    func aLoopbackDestinationGivesLoopbackSockets(_ host: String) throws {
        // Nothing is sent: the sockets are only opened and bound.
        let sender = try RTPStreamSender(
            host: host, port: 40_000, configuration: .init(packetizer: .init(codec: .h264, ssrc: 7)))
        #expect(sender.localAddresses.rtp.host == host)
        #expect(sender.localAddresses.rtcp.host == host)
        #expect(sender.localAddresses.rtp.port != 0 && sender.localAddresses.rtcp.port != 0)
    }
}
