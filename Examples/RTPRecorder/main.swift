import FormatConv
import Foundation
import MediaCore
import MediaIO
import RTPPayload

// RTPRecorder: records an RTP stream — a camera, an encoder, `ffmpeg -f rtp`
// — to an MP4 file, as it arrives, without decoding it.
//
//   RTPRecorder STREAM.sdp OUT.mp4 [SECONDS]
//
// The SDP gives the codec, the payload type, the port and the parameter
// sets (the stream's in-band ones work too). Packets are validated, put in
// order, lost ones asked for again (NACK, if the sender answers), and each
// access unit goes to the file with its RTP timestamp; after a loss that no
// retransmission repaired, recording resumes at the next keyframe. It stops
// at the sender's BYE, after SECONDS without a packet (default 3), or when
// the stream has no more to give.

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    print("usage: RTPRecorder STREAM.sdp OUT.mp4 [SECONDS]")
    exit(2)
}
let idleSeconds = arguments.count > 3 ? Double(arguments[3]) ?? 3 : 3

func record() throws -> Int {
    let sdp = try RTPSessionDescription(parsing: String(contentsOfFile: arguments[1], encoding: .utf8))
    let receiver = try RTPStreamReceiver(
        host: sdp.connectionAddress, port: sdp.port,
        configuration: .init(
            codec: sdp.codec, payloadType: sdp.payloadType, parameterSets: sdp.parameterSets,
            maximumDONDifference: sdp.maximumDONDifference ?? 0))
    let writer = try MovieWriter(path: arguments[2])
    var (written, waitingForKeyframe) = (0, true)
    // RTP carries presentation times only; MP4 also needs decode times.
    var timeline: DecodeTimestamps? = nil
    func write(_ samples: [CompressedSample]) throws {
        for sample in samples {
            try writer.append(sample)
            written += 1
        }
    }
    func handle(_ events: [RTPStreamReceiver.Event]) throws {
        for event in events {
            switch event {
            case .sample(let sample):
                if waitingForKeyframe && !sample.isKeyframe { continue }  // a file starts at a keyframe
                waitingForKeyframe = false
                if timeline == nil {
                    timeline = DecodeTimestamps(depth: sample.formatDescription.maxReorderFrames ?? 4)
                }
                try write(timeline!.push(sample))
            case .loss:
                waitingForKeyframe = true  // what follows refers to what was lost
            }
        }
    }
    while !receiver.isEnded && receiver.secondsSinceLastPacket < idleSeconds { try handle(receiver.receive()) }
    try handle(receiver.finish())
    try write(timeline?.finish() ?? [])
    try writer.finish()
    let stats = receiver.statistics
    print(
        "RTPRecorder: \(written) access units to \(arguments[2]); \(stats.packetsReceived) packets, "
            + "\(stats.packetsRepaired) repaired, \(stats.packetsLost) lost")
    return written
}

do {
    exit(try record() > 0 ? 0 : 1)
} catch {
    print("RTPRecorder: \(error)")
    exit(1)
}
