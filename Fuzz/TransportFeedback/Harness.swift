import FormatConv
import MediaCore
import RTPPayload

/// libFuzzer entry: the input as an RTCP compound packet (transport-cc feedback and REMB read from it), as the body
/// of a transport-cc feedback packet, as an RTP packet whose header extension elements are read and set, and as a
/// list of (sequence number, arrival step) records for `TransportFeedbackGenerator`. What parses must write bytes
/// that parse to the same value; the generator's feedback must parse back and stay within its bounds.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTransportFeedback(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let packets = try? RTCPPacket.parseCompound(bytes) {
        for packet in packets {
            if let feedback = try? packet.transportFeedback() {
                guard (try? RTCPTransportFeedback(body: feedback.body)) == feedback else {
                    fatalError("transport-cc feedback does not round-trip: \(feedback)")
                }
                _ = feedback.arrivalTimes
            }
            if let remb = try? packet.receiverEstimatedMaximumBitrate() {
                guard let again = try? RTCPReceiverEstimatedMaximumBitrate(body: remb.body), again.ssrcs == remb.ssrcs,
                    again.bitrate <= remb.bitrate
                else { fatalError("REMB does not round-trip: \(remb)") }
            }
        }
    }
    if let feedback = try? RTCPTransportFeedback(body: bytes) {
        guard (try? RTCPTransportFeedback(body: feedback.body)) == feedback else {
            fatalError("transport-cc body does not round-trip: \(feedback)")
        }
    }
    if var (header, _) = try? RTPHeader.parse(bytes), (try? header.extensionElements()) != nil {
        if (try? header.setExtensionElement(id: 5, data: [1, 2])) != nil {
            guard header.transportSequenceNumber(extensionID: 5) == 0x0102 else {
                fatalError("a transport-wide sequence number set does not read back")
            }
            guard (try? RTPHeader.parse(header.packet(payload: [0x65])))?.0 == header else {
                fatalError("a header with elements does not round-trip")
            }
        }
    }
    // Records: 2 bytes of sequence number, 1 byte of arrival step in ms (signed: reordering).
    var generator = TransportFeedbackGenerator()
    var time: Int64 = 1_000_000_000
    var index = 0
    var count = UInt8(0)
    // At most 1000 records: a long input covers the window limits already, and keeps the run fast.
    let records = bytes.prefix(3000)
    while index + 3 <= records.count {
        let number = UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
        time += Int64(Int8(bitPattern: bytes[index + 2])) * 1_000_000
        generator.record(sequenceNumber: number, arrival: MediaTime(value: time, timescale: 1_000_000_000))
        index += 3
        if bytes[index - 1] & 0x0F == 0x0F || index + 3 > records.count {
            let round = generator.makeFeedback(senderSSRC: 1, mediaSSRC: 2)
            guard round.reduce(0, { $0 + $1.packets.count }) <= Int(TransportFeedbackGenerator.maximumTracked) else {
                fatalError("a round of feedback covers more than maximumTracked numbers")
            }
            for feedback in round {
                guard feedback.packets.count <= TransportFeedbackGenerator.maximumPacketsPerFeedback else {
                    fatalError("feedback of \(feedback.packets.count) statuses is over the bound")
                }
                guard feedback.feedbackPacketCount == count else { fatalError("feedback packet count skipped") }
                count &+= 1
                guard (try? RTCPTransportFeedback(body: feedback.body)) == feedback else {
                    fatalError("generated feedback does not round-trip")
                }
            }
            guard !generator.hasPendingReports else { fatalError("reports pending after a feedback") }
        }
    }
    return 0
}
