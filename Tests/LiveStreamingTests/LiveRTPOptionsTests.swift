// MediaStreamSender.RTPOptions.live: the packets a live pipeline sends over
// 127.0.0.1 with it, read from their RTP headers (RFC 3550) and H.264 payload
// headers (RFC 6184).
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import Sockets
import TestSupport
import Testing

@Suite struct LiveRTPOptionsTests {
    /// The RTP packets (header and payload) a pipeline sends from an H.264
    /// file through a sender made with `options`.
    static func packets(_ options: MediaStreamSender.RTPOptions) throws -> [[UInt8]] {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try ffmpegTestPattern(
            size: "320x240", frames: 10, arguments: ["-c:v", "libx264", "-g", "5", "-bf", "0"], to: input)
        let socket = try UDPSocket(bindingTo: "127.0.0.1")
        let stream = try MediaStreamSender(url: "rtp://127.0.0.1:\(socket.localAddress.port)", rtp: options)
        let pipeline = try LivePipeline(
            source: try .file(input, loop: false), sink: stream, configuration: .init(pacing: false))
        try pipeline.run(until: { false })
        var packets: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while let (count, _) = try socket.receive(into: &buffer, timeout: .milliseconds(300)) {
            packets.append(Array(buffer[..<count]))
        }
        return packets
    }

    /// Payloads of at most the size asked, fragmented as FU-A (type 28)
    /// where a NAL unit is larger; one SSRC; sequence numbers one apart.
    @Test func payloadsKeepToTheSizeAsked() throws {
        let packets = try Self.packets(.live(payloadSize: 300))
        #expect(packets.count > 10)
        #expect(packets.allSatisfy { $0.count - 12 <= 300 && $0[0] >> 6 == 2 && $0[1] & 0x7F == 96 })
        #expect(packets.contains { $0[12] & 0x1F == 28 })
        #expect(Set(packets.map { $0[8..<12] }).count == 1)
        // The last packet goes once more at the end (the sender session's tail probe).
        #expect(packets.last == packets.dropLast().last)
        let sequence = packets.dropLast().map { UInt16($0[2]) << 8 | UInt16($0[3]) }
        #expect(zip(sequence, sequence.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
    }

    /// Single NAL unit mode: every payload is one NAL unit (types 1–23),
    /// neither aggregated nor fragmented.
    @Test func singleNALUnitModeSendsOneNALUnitAPacket() throws {
        let packets = try Self.packets(.live(payloadSize: 60_000, packetizationMode: .singleNALUnit))
        #expect(packets.count > 10)
        #expect(packets.allSatisfy { (1...23).contains($0[12] & 0x1F) })
    }
}
