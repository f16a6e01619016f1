// Conveniences for a pipeline from a file and for an RTP sink: a source from a
// path, the live RTP options of MediaStreamSender.
import CongestionControl
import MediaCore
import MediaIO
import RTPPayload

extension LivePipeline.Source {
    /// The source for the file at `path`: a Y4M clip (encoded), or an
    /// encoded file read at once (Annex-B, of `codec` when its name does not
    /// say; or a container's video track); again and again with `loop`.
    public static func file(_ path: String, codec: CodecType? = nil, loop: Bool) throws(MediaError) -> Self {
        guard let kind = MediaFileKind(path: path, standardStream: nil) else {
            throw .invalidArgument("\(path): unknown kind of file (expected .y4m, Annex-B or a container)")
        }
        if kind == .y4m { return .y4m(path: path, loop: loop) }
        return .encoded(try EncodedFile(path: path, codec: kind.annexBCodec ?? codec), loop: loop)
    }
}

extension MediaStreamSender.RTPOptions {
    /// RTP options for a live stream: a random SSRC, first sequence number
    /// and timestamp offset (RFC 3550 5.1), payloads of at most
    /// `payloadSize` bytes in `packetizationMode`, `rateController`
    /// following the receiver reports' loss, and `cname` in the SDES.
    /// `congestionControl` turns congestion control on (the transport-wide
    /// sequence number extension id
    /// `RTPStreamSender.defaultTransportSequenceNumberExtensionID`, a pacer,
    /// transport-cc feedback; the `rateController` is then not used).
    public static func live(
        payloadSize: Int = 1200, packetizationMode: RTPPacketizationMode = .nonInterleaved,
        rateController: LossBasedRateController? = nil, cname: String = "codecsessions",
        faultInjector: PacketFaultInjector? = nil, rtcpPort: Int = 0,
        congestionControl: CongestionControlConfiguration? = nil
    ) -> Self {
        var options = Self(
            configuration: { codec in
                let packetizer = RTPPacketizer.Configuration(
                    codec: codec, ssrc: UInt32.random(in: 1...UInt32.max),
                    initialSequenceNumber: UInt16.random(in: 0...UInt16.max),
                    timestampOffset: UInt32.random(in: 0...UInt32.max), maximumPayloadSize: payloadSize,
                    packetizationMode: packetizationMode)
                return .init(packetizer: packetizer, rateController: rateController, cname: cname)
            }, faultInjector: faultInjector, rtcpPort: rtcpPort)
        options.congestionControl = congestionControl
        return options
    }
}
