import EncodeSession
import FormatConv
import LiveStreaming
import MediaCore
import MediaIO
import RTPPayload

// The RTP sender of `codecs stream send`: a LivePipeline from the input to
// MediaIO's stream sender, and a summary of what happened.

/// One RTP stream out: the input (a Y4M clip encoded with the live
/// defaults, or an encoded file as it is) through ``LivePipeline`` (pacing,
/// keyframe requests, target rates) to MediaIO's ``MediaStreamSender`` (an
/// ``RTPStreamSender``: packetizing, sender reports, NACKs answered from the
/// history of sent packets); this type says what happened.
struct RTPSender {
    let url: RTPURL
    let pipeline: LivePipeline
    private let stream: MediaStreamSender

    init(
        input: String, url: RTPURL, settings: LivePipeline.EncoderSettings, configuration: LivePipeline.Configuration,
        loop: Bool, payloadSize: Int, mode: RTPPacketizationMode, injector: PacketFaultInjector?,
        adaptiveBitRate: Bool, rtcpPort: Int
    ) throws(MediaError) {
        self.url = url
        guard let kind = MediaFileKind(path: input, standardStream: nil) else {
            throw .invalidArgument("\(input): unknown kind of file (expected .y4m, Annex-B or a container)")
        }
        let source: LivePipeline.Source
        var rateController: LossBasedRateController? = nil
        switch kind {
        case .y4m:
            source = .y4m(path: input, loop: loop)
            if adaptiveBitRate, let rate = settings.properties.averageBitRate {
                rateController = LossBasedRateController(initial: rate, minimum: max(1_000, rate / 10), maximum: rate)
            }
        case .annexB(let fileCodec):
            if adaptiveBitRate { throw .invalidArgument("--adaptive-bitrate needs a Y4M input to encode") }
            source = .encoded(try EncodedFile(path: input, codec: fileCodec), loop: loop)
        case .container:
            if adaptiveBitRate { throw .invalidArgument("--adaptive-bitrate needs a Y4M input to encode") }
            source = .encoded(try EncodedFile(path: input), loop: loop)
        }
        let controller = rateController
        stream = try MediaStreamSender(
            url: "rtp://\(url.host.contains(":") ? "[\(url.host)]" : url.host):\(url.port)",
            rtp: .init(
                configuration: { codec in
                    var random = SystemRandomNumberGenerator()
                    let packetizer = RTPPacketizer.Configuration(
                        codec: codec, ssrc: UInt32.random(in: 1...UInt32.max, using: &random),
                        initialSequenceNumber: UInt16.random(in: 0...UInt16.max, using: &random),
                        timestampOffset: UInt32.random(in: 0...UInt32.max, using: &random),
                        maximumPayloadSize: payloadSize, packetizationMode: mode)
                    return .init(packetizer: packetizer, rateController: controller, cname: "codecs")
                }, faultInjector: injector, rtcpPort: rtcpPort))
        var configuration = configuration
        configuration.encoder = settings
        pipeline = try LivePipeline(source: source, sink: stream, configuration: configuration)
        if let file = pipeline.encodedFile {
            if file.skippedBeforeKeyframe > 0 {
                printError(
                    "codecs stream send: skipped \(file.skippedBeforeKeyframe) access units before the first keyframe")
            }
            if !file.otherTracks.isEmpty {
                printError(
                    "codecs stream send: RTP carries the video track only here; not sent from \(input): "
                        + file.otherTracks.map(\.description).joined(separator: "; "))
            }
        }
    }

    var formatDescription: FormatDescription { pipeline.formatDescription! }

    /// The figures of the stream (webrtc-stats `outbound-rtp`).
    var statistics: RTPOutboundStreamStatistics {
        stream.rtpSender?.statistics ?? RTPOutboundStreamStatistics(ssrc: 0)
    }
    var remoteStatistics: RTPRemoteInboundStreamStatistics? { stream.rtpSender?.remoteStatistics }

    var summary: String {
        let stats = statistics
        let live = pipeline.statistics
        let dropped = stream.rtpSender?.packetsDroppedOnPurpose ?? 0
        var text =
            "sent \(live.samplesSent) frames in \(stats.packetsSent) packets (\(stats.bytesSent) payload bytes) to "
            + "rtp://\(url.host.contains(":") ? "[\(url.host)]" : url.host):\(url.port)"
        if live.loops > 0 { text += " (the input \(live.loops + 1) times over)" }
        if dropped > 0 {
            text += "; dropped \(dropped) of \(stats.packetsSent) packets on purpose"
        }
        if stats.nackCount > 0 || stats.retransmittedPacketsSent > 0 {
            text +=
                "; \(stats.nackCount) NACKs, \(stats.retransmittedPacketsSent) packets retransmitted "
                + "(\(stats.retransmittedBytesSent) bytes)"
        }
        if live.rateChanges > 0, let rateRange = live.rateRange {
            text +=
                "; bit rate changed \(live.rateChanges) times from receiver reports (\(rateRange.lowerBound)…"
                + "\(rateRange.upperBound) bit/s; last \(live.recentRates.map(String.init).joined(separator: ", ")))"
        }
        let keyframeRequests = stats.keyframeRequestsForwarded
        if keyframeRequests > 0 {
            text += "; \(keyframeRequests) keyframe requests"
            if !live.keyframesForcedAt.isEmpty { text += ", keyframes forced at frames \(live.keyframesForcedAt)" }
            if live.keyframeRequestsNotHonourable > 0 {
                text += ", \(live.keyframeRequestsNotHonourable) not honored (sending a file)"
            }
        }
        return text
    }

    /// Sends the input, paced unless the configuration says otherwise,
    /// until its end or a stop signal.
    func run() throws(MediaError) {
        try pipeline.run(until: { StopSignal.requested != nil })
    }
}
