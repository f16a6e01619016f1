// LiveSend: synthetic frames (or a Y4M clip) sent live over RTP through
// LivePipeline, which paces them, forces a keyframe when the receiver asks
// (at most one per 500 ms) and follows the target rate of receiver reports.
//
//   swift run LiveSend 127.0.0.1 5004 [clip.y4m]
//   ffplay -protocol_whitelist file,udp,rtp -i stream.sdp   (SDP: `codecs stream send --sdp`)
import Foundation
import LiveStreaming
import MediaCore
import MediaIO

let arguments = CommandLine.arguments
guard arguments.count >= 3, let port = Int(arguments[2]) else {
    print("usage: LiveSend HOST PORT [clip.y4m]")
    exit(2)
}
do {
    let sender = try RTPStreamSender(
        host: arguments[1], port: port, configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x11FE_5E4D)))
    var configuration = LivePipeline.Configuration()
    configuration.encoder.bitRate = 1_000_000
    let pipeline: LivePipeline
    if arguments.count > 3 {
        // A clip, paced by its frame rate.
        pipeline = try LivePipeline(
            source: .y4m(path: arguments[3], loop: false), sink: sender, configuration: configuration)
    } else {
        // Frames the app makes: 5 s of a synthetic clip pushed from another task.
        let clip = SyntheticClip(width: 640, height: 360, frameCount: 150, frameRate: 30)
        pipeline = try LivePipeline(source: .frames(framesPerSecond: 30), sink: sender, configuration: configuration)
        Task.detached {
            for index in 0..<clip.frameCount {
                pipeline.push(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
            }
            pipeline.endOfFrames()
        }
    }
    try await pipeline.run()  // cancelling the task stops it
    let statistics = pipeline.statistics
    print(
        "sent \(statistics.frames) frames; \(statistics.keyframeRequests) keyframe requests, "
            + "keyframes forced at frames \(statistics.keyframesForcedAt); \(sender.statistics.packetsSent) packets")
} catch {
    print("LiveSend: \(error)")
    exit(1)
}
