// RTPStreamSender with congestion control on loopback: probes raise the target, feedback counted, nothing lost.
import CongestionControl
import Dispatch
import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import RTPPayload
import TestSupport
import Testing

struct RTPStreamSenderCongestionTests {
    /// 60 frames (2 s at 30 fps) of a small clip, encoded once.
    static func samples(count: Int = 60) throws -> [CompressedSample] {
        var properties = CompressionProperties()
        properties.preset = "ultrafast"
        properties.realTime = true
        let session = try CompressionSession(
            width: 160, height: 96, codec: .h264, encoder: .software, properties: properties)
        return try encodeClip(session, count: count)
    }

    /// Sends `samples` a frame every 33 ms on loopback to a receiver that sends transport-cc feedback, serving
    /// both from this thread; the samples received, the loss events and the targets the sender handed out.
    static func run(_ samples: [CompressedSample], sender: RTPStreamSender, receiver: RTPStreamReceiver) throws
        -> (received: [CompressedSample], losses: Int, targets: [Int])
    {
        var received: [CompressedSample] = []
        var losses = 0
        var targets: [Int] = []
        func take(_ events: [RTPStreamReceiver.Event]) {
            for event in events {
                switch event {
                case .sample(let sample): received.append(sample)
                case .loss: losses += 1
                }
            }
        }
        func serve(for seconds: Double) throws {
            let end = MonotonicSeconds.now() + seconds
            while MonotonicSeconds.now() < end {
                take(try receiver.receive(waiting: 0.002))
                try sender.pace(for: 0.001)
            }
            if let target = sender.takeFeedback().targetBitRate { targets.append(target) }
        }
        for sample in samples {
            if let target = try sender.send(sample).targetBitRate { targets.append(target) }
            try serve(for: 1.0 / 30)
        }
        try serve(for: 0.3)
        try sender.finish(lingering: 0.05)
        take(try receiver.receive(waiting: 0.05))
        take(try receiver.finish())
        return (received, losses, targets)
    }

    /// Congestion control on, no shaping: the start-up probes (padding at 3× and 6× the 300 kb/s start rate)
    /// come back acknowledged in transport-cc feedback and raise the target above the start rate while the clip
    /// itself needs far less; every frame arrives, none is reported lost, every packet left in order.
    @Test func probesRaiseTheTargetOnLoopbackAndNothingIsLost() throws {
        let samples = try Self.samples()
        let receiver = try RTPStreamReceiver(
            host: "127.0.0.1", port: 0,
            configuration: .init(
                codec: .h264,
                transportFeedback: .init(extensionID: RTPStreamSender.defaultTransportSequenceNumberExtensionID)))
        let sender = try RTPStreamSender(
            host: "127.0.0.1", port: receiver.port, configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x5EED)),
            congestionControl: CongestionControlConfiguration(startRate: 300_000, maximumRate: 5_000_000))
        #expect(sender.congestionControlEnabled)
        let result = try Self.run(samples, sender: sender, receiver: receiver)
        #expect(result.received.count == samples.count)
        #expect(result.received.map(\.pts) == samples.map(\.pts))
        #expect(result.losses == 0)
        let stats = try #require(sender.congestionStatistics)
        #expect(stats.controller.probeClustersSent >= 2)
        #expect(stats.controller.probeClustersSucceeded >= 1)
        #expect(stats.probeClustersCompleted >= 2)
        #expect(stats.paddingPacketsSent > 0)
        #expect(stats.controller.feedbackReports > 0)
        #expect(stats.controller.packetsAcknowledged > 0)
        #expect(stats.controller.packetsReportedLost == 0)
        #expect(stats.controller.unknownFeedbackPackets == 0)
        #expect(stats.packetsOutOfOrder == 0)
        #expect(stats.queuedPackets == 0)
        #expect(stats.targetBitrate > 300_000)
        #expect(stats.availableOutgoingBitrate == stats.targetBitrate)
        // The first target handed out is the start rate; a later one is above it.
        #expect(result.targets.first == 300_000)
        #expect((result.targets.max() ?? 0) > 300_000)
        // Every media packet and padding packet was reported to the controller as sent.
        #expect(stats.controller.packetsSent == sender.statistics.packetsSent + stats.paddingPacketsSent)
        #expect(receiver.statistics.packetsLost == 0)
    }

    /// Congestion control off (the default): no statistics, no queue, the loss-based target as before.
    @Test func offByDefault() throws {
        let samples = try Self.samples(count: 4)
        let receiver = try RTPStreamReceiver(host: "127.0.0.1", port: 0, configuration: .init(codec: .h264))
        let sender = try RTPStreamSender(
            host: "127.0.0.1", port: receiver.port, configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x5EED)))
        #expect(!sender.congestionControlEnabled)
        #expect(sender.congestionStatistics == nil)
        #expect(sender.sendQueueDelay == nil)
        #expect(!sender.shouldDropFrames(maxQueueDelay: 0))
        let result = try Self.run(samples, sender: sender, receiver: receiver)
        #expect(result.received.count == 4)
        #expect(result.targets.isEmpty)
    }

    /// A configuration the controller refuses is a clear error naming the setting.
    @Test func badConfigurationIsRefused() throws {
        #expect(throws: MediaError.self) {
            _ = try RTPStreamSender(
                host: "127.0.0.1", port: 5004, configuration: .init(packetizer: .init(codec: .h264, ssrc: 1)),
                congestionControl: CongestionControlConfiguration(startRate: 10, minimumRate: 30_000))
        }
        do {
            _ = try RTPStreamSender(
                host: "127.0.0.1", port: 5004, configuration: .init(packetizer: .init(codec: .h264, ssrc: 1)),
                congestionControl: CongestionControlConfiguration(startRate: 10, minimumRate: 30_000))
        } catch {
            #expect(error.message.contains("startRate 10"))
        }
    }
}

/// The monotonic clock in seconds (the tests' wait loops).
enum MonotonicSeconds {
    static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }
}
