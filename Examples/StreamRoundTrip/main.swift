import DecodeSession
import EncodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO
import RTPPayload

// StreamRoundTrip: the whole CodecSessions round trip in one program, over
// RTP on the loopback, with 3 % of the packets lost on purpose:
//
//   frames ─▶ CompressionSession ─▶ RTPStreamSender ─▶ UDP (127.0.0.1) ─▶
//   RTPStreamReceiver ─▶ DecompressionSession ─▶ frames, compared with the source
//
// The receiver asks for every lost packet again (RTCP generic NACK) and the
// sender sends it from its history, so every frame comes back; a keyframe
// request (PLI) that comes makes the next frame a keyframe. Both sides are
// tasks: the sender paces by sleeping (feedback read meanwhile), the
// receiver is awaited as an AsyncSequence, with a watchdog that cancels it.
// Exit status 0 means every frame came back at or above the PSNR pass mark.

let (width, height, frameCount, frameRate) = (320, 240, 60, Int32(30))
let passMark = 30.0  // dB of luma PSNR every frame must reach

/// Encodes the clip and sends it to 127.0.0.1:`port` as RTP, paced at the
/// frame rate, with 3 % of the packets dropped on the way.
func sendClip(to port: Int) async {
    let clip = SyntheticClip(width: width, height: height, frameCount: frameCount, frameRate: Int(frameRate))
    do {
        var properties = CompressionProperties()
        properties.realTime = true  // no B-frames, no look-ahead: a frame out for every frame in
        properties.maxKeyFrameInterval = Int(frameRate)
        let encoder = try CompressionSession(width: width, height: height, codec: .h264, properties: properties)
        let stream = try RTPStreamSender(
            host: "127.0.0.1", port: port,
            configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x5EED_0001)),
            faultInjector: PacketFaultInjector(seed: 3, dropProbability: 0.03))
        let frameDuration = MediaTime(value: 1, timescale: frameRate)
        let start = ContinuousClock.now
        for index in 0..<frameCount {
            // Paced: the task sleeps until the frame is due, NACKs answered meanwhile;
            // a keyframe request that came while it slept shapes this frame.
            try await stream.wait(until: start + .seconds(Double(index) / Double(frameRate)))
            if stream.takeFeedback().keyframeRequested { encoder.requestKeyFrame() }
            let pts = frameDuration * Int64(index)
            for sample in try encoder.encode(clip.frame(at: index), pts: pts, duration: frameDuration) {
                if try stream.send(sample).keyframeRequested { encoder.requestKeyFrame() }
            }
        }
        for sample in try encoder.finish() { _ = try stream.send(sample) }
        encoder.invalidate()
        try await stream.close(lingering: .milliseconds(300))  // NACKs for the last packets, then BYE
        print(
            "sender: \(stream.statistics.packetsSent) packets, \(stream.packetsDroppedOnPurpose) lost on purpose, "
                + "\(stream.statistics.retransmittedPacketsSent) sent again")
    } catch {
        print("sender: \(error)")
    }
}

/// Receives the stream, decodes every access unit and compares each frame
/// with its source; true when every frame came back above the pass mark.
func receiveClip() async throws -> Bool {
    let clip = SyntheticClip(width: width, height: height, frameCount: frameCount, frameRate: Int(frameRate))
    // RTP on a free even port of 127.0.0.1, RTCP on the one above; then the sender.
    let receiver = try RTPStreamReceiver(host: "127.0.0.1", port: 0, configuration: .init(codec: .h264))
    let port = receiver.port
    let sender = Task { await sendClip(to: port) }
    // Cancels the receive if the stream has not ended (BYE) within 20 s.
    let stop = receiver.cancellation
    let watchdog = Task {
        try await Task.sleep(for: .seconds(20))
        stop.cancel()
    }

    var decoder: DecompressionSession? = nil
    var (framesBack, lowestPSNR) = (0, Double.infinity)
    func check(_ frames: [DecodedFrame]) {
        for frame in frames {
            let index = Int(frame.pts.converted(toTimescale: frameRate).value)  // RTP timestamps carry pts
            lowestPSNR = min(lowestPSNR, PictureQuality.psnr(frame.pixelBuffer, clip.frame(at: index)).y)
            framesBack += 1
        }
    }
    func handle(_ event: RTPStreamReceiver.Event) throws {
        switch event {
        case .sample(let sample):
            // The first sample's description (from in-band parameter sets) makes the session.
            if decoder == nil {
                decoder = try DecompressionSession(
                    formatDescription: sample.formatDescription, output: DecoderOutputAttributes(pixelFormat: .i420))
            }
            check(try decoder!.decode(sample))
        case .loss(let loss):  // a gap no retransmission filled: skip to the next keyframe
            check(try decoder?.reportLoss(loss.description) ?? [])
        }
    }
    // Ends at the sender's BYE, or when the watchdog cancels.
    for try await event in receiver { try handle(event) }
    watchdog.cancel()
    await sender.value
    for event in try receiver.finish() { try handle(event) }
    check(try decoder?.finish() ?? [])  // frames the decoder still holds

    let stats = receiver.statistics
    let passed = framesBack == frameCount && lowestPSNR >= passMark
    print(
        "receiver: \(stats.packetsReceived) packets, \(stats.nackCount) NACKs sent, \(stats.packetsRepaired) repaired, "
            + "\(stats.packetsLost) lost for good")
    print(
        "StreamRoundTrip: \(framesBack) of \(frameCount) frames back, lowest luma PSNR "
            + String(format: "%.2f dB", lowestPSNR) + " (pass: every frame back, ≥ \(passMark) dB): "
            + (passed ? "PASS" : "FAIL"))
    return passed
}

exit(try await receiveClip() ? 0 : 1)
