// RTPReceiverConfiguration: one settings type for every endpoint type, and its presets.
import FormatConv
import MediaCore
import RTPPayload
import Testing

@Suite struct RTPReceiverConfigurationTests {
    /// `.noRetransmission` is the default settings without NACK: the same
    /// packet lost (index 20 of the stream) is asked for twice by the
    /// default session and never by this one; both give it up as one loss
    /// and ask for a keyframe.
    @Test func noRetransmissionSendsNoNACK() throws {
        let packets = try senderPackets(try multiPacketStream(frames: 30, gop: 100)).flatMap { $0 }
        func run(_ configuration: RTPReceiverConfiguration) throws -> (nacks: Int, plis: Int, losses: [RTPLossEvent]) {
            var driver = ReceiverDriver(configuration)
            for (index, packet) in packets.enumerated() where index != 20 {
                driver.rtp(packet, at: ms(Int64(index) * 10))
            }
            driver.advance(to: ms(Int64(packets.count) * 10 + 2000))
            let feedback = try driver.rtcp.flatMap { try RTCPPacket.parseCompound($0) }
            let nacks = feedback.filter { if case .genericNACK = $0 { true } else { false } }.count
            let plis = feedback.filter { if case .pictureLossIndication = $0 { true } else { false } }.count
            return (nacks, plis, driver.losses)
        }
        let preset = RTPReceiverConfiguration.noRetransmission(codec: .h264, payloadType: 96)
        #expect(preset.nack == nil)
        #expect(preset.codec == .h264 && preset.payloadType == 96)
        var withNACK = preset
        withNACK.nack = RTPReceiverConfiguration.NACKSettings()
        let lost = RTPLossEvent(firstSequenceNumber: 40_000 + 20, count: 1)
        let repaired = try run(withNACK)
        #expect(repaired.nacks == 2)
        #expect(repaired.losses == [lost])
        let unrepaired = try run(preset)
        #expect(unrepaired.nacks == 0)
        #expect(unrepaired.losses == [lost])
        #expect(unrepaired.plis >= 1)
        // The generic session's Configuration is this type, whatever the endpoint.
        let generic: RTPReceiverSession<String>.Configuration = preset
        #expect(generic.nack == nil)
    }
}
