// SRTRecorder: records what an SRT caller sends (MPEG-TS: video and audio) to a fragmented MP4 as it arrives,
// without decoding it; a task stops it with cancel() after SECONDS (default 10), and so does Ctrl-C.
//   SRTRecorder PORT OUT.mp4 [SECONDS]   then: ffmpeg -re -i in.mp4 -c copy -f mpegts srt://127.0.0.1:PORT
import Foundation
import MediaIO

let arguments = CommandLine.arguments
guard arguments.count >= 3, let port = Int(arguments[1]) else {
    print("usage: SRTRecorder PORT OUT.mp4 [SECONDS]")
    exit(2)
}
do {
    let receiver = try MediaStreamReceiver(url: "srt://127.0.0.1:\(port)?mode=listener", readingEveryTrack: true)
    let timer = Task { [stop = receiver.cancellation] in  // receiver.cancel() works from any task or thread too
        try await Task.sleep(for: .seconds(Double(arguments.dropFirst(3).first ?? "") ?? 10))
        stop.cancel()  // the loop below ends within 0.1 s, also while the listener waits for its caller
    }
    signal(SIGINT, SIG_IGN)  // Ctrl-C cancels the receiver too, instead of ending the process
    let interrupt = DispatchSource.makeSignalSource(signal: SIGINT)
    interrupt.setEventHandler { [stop = receiver.cancellation] in stop.cancel() }
    interrupt.resume()
    let writer = try MovieWriter(path: arguments[2], options: .init(fragmented: true, flushInterval: 1))
    var fileTrack: [Int: Int]? = nil  // the stream's other tracks (audio) → the file's tracks 1, 2, …
    for try await event in receiver {
        if fileTrack == nil {  // connected: the receiver knows the stream's tracks before its first event
            fileTrack = [:]
            for (position, track) in receiver.tracks.enumerated() where position != receiver.videoTrack {
                fileTrack![track.index] = try writer.addTrack(copying: track)
            }
        }
        if case .sample(let sample) = event { try writer.append(sample) }
        if case .packet(let audio) = event, let out = fileTrack![audio.track] { try writer.append(audio, toTrack: out) }
    }
    timer.cancel()
    try writer.finish()
    print("SRTRecorder: \(writer.sampleCount) video samples, \(writer.copiedPacketCount) other packets written")
} catch {
    print("SRTRecorder: \(error)")
    exit(1)
}
