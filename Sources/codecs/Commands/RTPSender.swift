import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import RTPPayload

// The RTP sender of `codecs stream send`: samples from an encoder or a file,
// paced, through MediaIO's stream sender, with the feedback acted on and a
// summary of what happened.

/// Samples from a Y4M file through an encoder, or from an encoded file as
/// they are (MediaIO's ``EncodedFile``: presentation times, which RTP
/// timestamps carry).
private enum SenderSource {
    case encoder(CompressionSession, Y4MReader, frameDuration: MediaTime)
    case file(EncodedFile)
}

/// One RTP stream out: the samples of `source` through MediaIO's
/// ``MediaStreamSender`` (an ``RTPStreamSender``: packetizing, sender
/// reports, NACKs answered from the history of sent packets, keyframe
/// requests and receiver reports turned into feedback), paced at the frame
/// rate while feedback is still read; this type says what happened.
struct RTPSender {
    let url: RTPURL
    let formatDescription: FormatDescription
    private var source: SenderSource
    private let stream: MediaStreamSender
    private(set) var framesSent = 0
    private(set) var keyframesForced: [Int] = []
    private var keyframeRequestsIgnored = 0
    /// How many times the rate changed, its range, and the last few rates
    /// (a bounded record: a peer flooding reports cannot grow it).
    private(set) var rateChangeCount = 0
    private var rateRange: ClosedRange<Int>?
    private var recentRates: [Int] = []
    /// Feedback that came in while a sample was being sent, for the next frame.
    private var pendingFeedback = MediaStreamSender.Feedback()

    init(
        input: String, url: RTPURL, options: EncodeOptions, payloadSize: Int, mode: RTPPacketizationMode,
        injector: PacketFaultInjector?, adaptiveBitRate: Bool, rtcpPort: Int
    ) throws(MediaError) {
        self.url = url
        guard let kind = MediaFileKind(path: input, standardStream: nil) else {
            throw .invalidArgument("\(input): unknown kind of file (expected .y4m, Annex-B or a container)")
        }
        var rateController: LossBasedRateController? = nil
        switch kind {
        case .y4m:
            let reader = try Y4MReader(path: input)
            let live = try LiveEncoder(header: reader.header, input: input, options: options)
            let encoder = live.session
            if adaptiveBitRate, let rate = encoder.properties.averageBitRate {
                rateController = LossBasedRateController(initial: rate, minimum: max(1_000, rate / 10), maximum: rate)
            }
            formatDescription = encoder.formatDescription
            source = .encoder(encoder, reader, frameDuration: live.frameDuration)
        case .annexB(let fileCodec):
            if adaptiveBitRate { throw .invalidArgument("--adaptive-bitrate needs a Y4M input to encode") }
            let file = try EncodedFile(path: input, codec: fileCodec)
            if file.skippedBeforeKeyframe > 0 {
                printError(
                    "codecs stream send: skipped \(file.skippedBeforeKeyframe) access units before the first keyframe")
            }
            formatDescription = file.formatDescription
            source = .file(file)
        case .container:
            if adaptiveBitRate { throw .invalidArgument("--adaptive-bitrate needs a Y4M input to encode") }
            let file = try EncodedFile(path: input)
            if !file.otherTracks.isEmpty {
                printError(
                    "codecs stream send: RTP carries the video track only here; not sent from \(input): "
                        + file.otherTracks.map(\.description).joined(separator: "; "))
            }
            formatDescription = file.formatDescription
            source = .file(file)
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
    }

    /// The figures of the stream (webrtc-stats `outbound-rtp`).
    var statistics: RTPOutboundStreamStatistics {
        stream.rtpSender?.statistics ?? RTPOutboundStreamStatistics(ssrc: 0)
    }
    var remoteStatistics: RTPRemoteInboundStreamStatistics? { stream.rtpSender?.remoteStatistics }

    var summary: String {
        let stats = statistics
        let dropped = stream.rtpSender?.packetsDroppedOnPurpose ?? 0
        var text =
            "sent \(framesSent) frames in \(stats.packetsSent) packets (\(stats.bytesSent) payload bytes) to "
            + "rtp://\(url.host.contains(":") ? "[\(url.host)]" : url.host):\(url.port)"
        if dropped > 0 {
            text += "; dropped \(dropped) of \(stats.packetsSent) packets on purpose"
        }
        if stats.nackCount > 0 || stats.retransmittedPacketsSent > 0 {
            text +=
                "; \(stats.nackCount) NACKs, \(stats.retransmittedPacketsSent) packets retransmitted "
                + "(\(stats.retransmittedBytesSent) bytes)"
        }
        if rateChangeCount > 0, let rateRange {
            text +=
                "; bit rate changed \(rateChangeCount) times from receiver reports (\(rateRange.lowerBound)…"
                + "\(rateRange.upperBound) bit/s; last \(recentRates.map(String.init).joined(separator: ", ")))"
        }
        let keyframeRequests = stats.keyframeRequestsForwarded
        if keyframeRequests > 0 {
            text += "; \(keyframeRequests) keyframe requests"
            if !keyframesForced.isEmpty { text += ", keyframes forced at frames \(keyframesForced)" }
            if keyframeRequestsIgnored > 0 { text += ", \(keyframeRequestsIgnored) not honored (sending a file)" }
        }
        return text
    }

    mutating func run(pace: Bool) throws(MediaError) {
        switch source {
        case .encoder(let encoder, let reader, let frameDuration):
            defer { encoder.invalidate() }
            var index: Int64 = 0
            while StopSignal.requested == nil, let frame = try reader.readFrame() {
                let feedback = try wait(until: pace ? frameDuration * index : nil)
                if feedback.keyframeRequested {
                    encoder.requestKeyFrame()
                    keyframesForced.append(Int(index))
                    if keyframesForced.count > 64 { keyframesForced.removeFirst() }
                }
                if let rate = feedback.targetBitRate {
                    try encoder.setAverageBitRate(rate)
                    rateChangeCount += 1
                    rateRange = rateRange.map { min($0.lowerBound, rate)...max($0.upperBound, rate) } ?? rate...rate
                    recentRates = Array((recentRates + [rate]).suffix(5))
                }
                try send(encoder.encode(frame, pts: frameDuration * index, duration: frameDuration))
                index += 1
            }
            try send(encoder.finish())
        case .file(let file):
            for (index, sample) in file.samples.enumerated() where StopSignal.requested == nil {
                let feedback = try wait(until: pace ? file.frameDuration * Int64(index) : nil)
                if feedback.keyframeRequested { keyframeRequestsIgnored += 1 }
                try send([sample])
            }
        }
        // The BYE goes after the receiver's jitter buffer had time to ask for
        // the last packets again (NACKs are answered meanwhile).
        try stream.finish(lingering: 0.3)
    }

    /// Reads feedback until `time` (the frame's place on the stream's
    /// clock), or just what is waiting when nil.
    private mutating func wait(until time: MediaTime?) throws(MediaError) -> MediaStreamSender.Feedback {
        var feedback = pendingFeedback
        pendingFeedback = MediaStreamSender.Feedback()
        feedback.merge(try stream.wait(until: time ?? .invalid))
        return feedback
    }

    private mutating func send(_ samples: [CompressedSample]) throws(MediaError) {
        for sample in samples {
            pendingFeedback.merge(try stream.send(sample))
            framesSent += 1
        }
    }
}
