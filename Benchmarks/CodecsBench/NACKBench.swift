import FormatConv
import Foundation
import MediaCore
import MediaIO
import RTPPayload

/// Seeded packet loss on a file sent as it is (the bench's x264 720p stream,
/// B-frames), over RTP on the loopback with a 50 ms jitter buffer: how many
/// access units reach the receiver byte for byte what was sent (so their
/// pictures are the file's), with generic NACK and, in the same run,
/// without it.
func benchmarkNACK(_ stream: CodedStream, frames: Int, report: Report) throws {
    let samples = Array(stream.samples.prefix(frames))
    for percent in [1, 3, 5] {
        let repaired = try intactFrames(samples, lossPercent: percent, nack: true)
        let unrepaired = try intactFrames(samples, lossPercent: percent, nack: false)
        report.add(
            Figure(
                name: "RTP \(percent) % loss, \(stream.label), 50 ms buffer: access units intact",
                ours: Double(repaired), reference: Double(unrepaired), referenceName: "the same run without NACK",
                unit: "of \(samples.count)", higherIsBetter: true, target: "all \(samples.count)"))
    }
}

/// Sends `samples` at 30 a second through a fault injector dropping
/// `lossPercent` % of the packets (seed 42), and counts the access units the
/// receiver hands out equal, byte for byte, to one sent.
private func intactFrames(_ samples: [CompressedSample], lossPercent: Int, nack: Bool) throws -> Int {
    let codec = samples[0].formatDescription.codec
    let receiver = try RTPStreamReceiver(
        host: "127.0.0.1", port: 0,
        configuration: .init(
            codec: codec, jitterBufferDelay: MediaTime(value: 50, timescale: 1000), nack: nack ? .init() : nil))
    let port = receiver.port
    let sender = Thread {
        do {
            let stream = try RTPStreamSender(
                host: "127.0.0.1", port: port,
                configuration: .init(packetizer: .init(codec: codec, ssrc: 0xBE7C_0001)),
                faultInjector: PacketFaultInjector(seed: 42, dropProbability: Double(lossPercent) / 100))
            let start = Date()
            for (index, sample) in samples.enumerated() {
                _ = try stream.send(sample)
                _ = try stream.poll(for: start.addingTimeInterval(Double(index + 1) / 30).timeIntervalSinceNow)
            }
            try stream.finish(lingering: 0.3)
        } catch {
            FileHandle.standardError.write(Data("codecs-bench: NACK sender: \(error)\n".utf8))
        }
    }
    sender.start()
    var unmatched = Set(samples.map(\.data))
    var intact = 0
    func count(_ events: [RTPStreamReceiver.Event]) {
        for case .sample(let sample) in events where unmatched.remove(sample.data) != nil { intact += 1 }
    }
    while !receiver.isEnded && receiver.secondsSinceLastPacket < 3 { count(try receiver.receive()) }
    count(try receiver.finish())
    return intact
}
