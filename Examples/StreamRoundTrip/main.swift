// StreamRoundTrip: frames → LivePipeline → RTP on the loopback, 3 % of the packets lost on purpose and repaired
// by NACK → RTPStreamReceiver → StreamDecoder; exit status 0 when every frame is back at ≥ 30 dB luma PSNR.
import DecodeSession
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import RTPPayload

struct Check: DecodedFrameSink {  // the luma PSNR of each frame back against its source (RTP carries the pts)
    let clip: SyntheticClip
    var psnr: [Double] = []
    mutating func assemblerDropped(_ nalUnitCount: Int, reason: String) {}
    mutating func receive(_ frames: [DecodedFrame]) {
        psnr += frames.map { PictureQuality.psnr($0.pixelBuffer, clip.frame(at: Int($0.pts.seconds * 30 + 0.5))).y }
    }
}

let clip = SyntheticClip(width: 320, height: 240, frameCount: 60, frameRate: 30)
let receiver = try RTPStreamReceiver(host: "127.0.0.1", port: 0, configuration: .init(codec: .h264))  // NACK on
let sender = try RTPStreamSender(
    host: "127.0.0.1", port: receiver.port, configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x5EED_0001)),
    faultInjector: PacketFaultInjector(seed: 3, dropProbability: 0.03))
let pipeline = try LivePipeline(source: .frames(framesPerSecond: 30), sink: sender)  // paced; PLI → keyframe
for index in 0..<clip.frameCount { pipeline.push(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index)) }
pipeline.endOfFrames()
let sending = Task { try await pipeline.run() }  // ends with NACKs answered for 0.3 s, then BYE
let watchdog = Task { [stop = receiver.cancellation] in  // receiver.cancel() from any task ends the loop below
    try await Task.sleep(for: .seconds(20))
    stop.cancel()
}
var decoder = StreamDecoder(codec: .h264, settings: .init(), sink: Check(clip: clip))
for try await event in receiver {  // until the sender's BYE
    switch event {
    case .sample(let sample): try decoder.decode(sample)
    case .loss(let loss): try decoder.reportLoss(loss.description)  // not repaired: on at the next keyframe
    }
}
try decoder.finish()
watchdog.cancel()
try await sending.value
let (sent, got, check) = (sender.statistics, receiver.statistics, decoder.sink)
print(
    "sender: \(sent.packetsSent) packets, \(sender.packetsDroppedOnPurpose) lost on purpose,",
    "\(sent.retransmittedPacketsSent) sent again; \(pipeline.statistics.keyframeRequests) keyframe requests")
print("receiver: \(got.nackCount) NACKs sent, \(got.packetsRepaired) repaired, \(got.packetsLost) lost for good")
let passed = check.psnr.count == clip.frameCount && check.psnr.allSatisfy { $0 >= 30 }
let verdict = String(format: "lowest luma PSNR %.2f dB: ", check.psnr.min() ?? 0) + (passed ? "PASS" : "FAIL")
print("StreamRoundTrip: \(check.psnr.count) of \(clip.frameCount) frames back, \(verdict)")
exit(passed ? 0 : 1)
