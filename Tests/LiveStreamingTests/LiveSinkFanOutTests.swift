import FormatConv
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import RTPPayload
import Sockets
import Testing

/// `RTPFanOutSender` as a live sink: every packet of every frame the
/// pipeline encodes reaches each of two receivers on 127.0.0.1.
@Test func aFanOutSinkSendsEveryFrameToEveryReceiver() throws {
    let receivers = try (0..<2).map { _ in try UDPSocket(bindingTo: "127.0.0.1", port: 0) }
    defer { for receiver in receivers { receiver.close() } }
    let fanOut = try RTPFanOutSender(
        configuration: .init(codec: .h264, ssrc: 0x5EED), destinations: receivers.map(\.localAddress))
    defer { fanOut.close() }
    let pipeline = try LivePipeline(
        source: .frames(framesPerSecond: 30), sink: fanOut, configuration: .init(pacing: false))
    let clip = SyntheticClip(width: 160, height: 96, frameCount: 10, frameRate: 30)
    for index in 0..<clip.frameCount {
        pipeline.push(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
    }
    pipeline.endOfFrames()
    try pipeline.run(until: { false })
    #expect(pipeline.statistics.samplesSent == 10)
    #expect(fanOut.statistics.samples == 10)
    var buffer = [UInt8](repeating: 0, count: 2048)
    for receiver in receivers {
        var datagrams = 0
        while try receiver.receive(into: &buffer, timeout: .milliseconds(200)) != nil { datagrams += 1 }
        #expect(datagrams == fanOut.statistics.packets)
    }
}
