import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

/// Writes `frames` frames of a 320×240 synthetic clip to a Y4M file.
func writeClip(to path: String, frames: Int) throws {
    let clip = SyntheticClip(width: 320, height: 240, frameCount: frames)
    let writer = try Y4MWriter(path: path, header: Y4MHeader(width: 320, height: 240, frameRate: (30, 1)))
    for index in 0..<frames { try writer.write(clip.frame(at: index)) }
    try writer.close()
}

/// A process started in the background whose standard error is read line by
/// line as it comes.
final class BackgroundProcess: @unchecked Sendable {
    let process = Process()
    private let errorPipe = Pipe()
    private let outputPipe = Pipe()
    private let lock = NSLock()
    private var errorText = ""
    private var outputData = Data()
    private let readers = DispatchGroup()

    init(_ executable: String, _ arguments: [String]) throws {
        guard let path = findExecutable(executable) else { throw ProcessError("\(executable): not found") }
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardError = errorPipe
        process.standardOutput = outputPipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        for (pipe, isError) in [(errorPipe, true), (outputPipe, false)] {
            readers.enter()
            DispatchQueue.global().async { [self] in
                let handle = pipe.fileHandleForReading
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    lock.lock()
                    if isError { errorText += String(decoding: data, as: UTF8.self) } else { outputData += data }
                    lock.unlock()
                }
                readers.leave()
            }
        }
    }

    var standardError: String {
        lock.lock()
        defer { lock.unlock() }
        return errorText
    }

    /// Waits (up to `seconds`) for a line of standard error matching `find`.
    func waitForError<T>(seconds: Double = 30, _ find: (String) -> T?) -> T? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let found = find(standardError) { return found }
            if !process.isRunning, let found = find(standardError) { return found }
            usleep(20_000)
        }
        return nil
    }

    /// Waits for the process to end; returns its status and standard output.
    func wait() -> (status: Int32, stdout: Data, stderr: String) {
        process.waitUntilExit()
        readers.wait()
        lock.lock()
        defer { lock.unlock() }
        return (process.terminationStatus, outputData, errorText)
    }

    func terminate() {
        if process.isRunning { process.terminate() }
    }
}

/// The port in `codecs stream serve`'s "listening on tcp://ADDRESS:PORT" line.
func listeningPort(_ text: String) -> Int? {
    guard let range = text.range(of: "listening on tcp://127.0.0.1:") else { return nil }
    return Int(text[range.upperBound...].prefix(while: \.isNumber))
}

/// A TCP port that was free a moment ago (bound to port 0, then released).
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let status = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard status else { throw ProcessError("cannot find a free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// FFmpeg as a client of `codecs stream serve`: FFmpeg's decode of our
/// stream and our own receiver's decode of the same stream agree frame by
/// frame (MD5 of each decoded picture).
@Test(arguments: ["h264", "hevc"])
func ffmpegReadsOurServer(codec: String) throws {
    let directory = try TemporaryDirectory()
    let clip = directory.path("clip.y4m")
    try writeClip(to: clip, frames: 40)
    let server = try BackgroundProcess(
        TestPaths.codecsExecutable.path,
        [
            "stream", "serve", "-i", clip, "--port", "0", "--listen", "127.0.0.1", "--no-pace", "--wait-clients", "2",
            "--codec", codec, "--encoder", "software",
        ])
    defer { server.terminate() }
    let port = try #require(server.waitForError(listeningPort), "serve did not listen: \(server.standardError)")

    let ffmpeg = try BackgroundProcess(
        "ffmpeg",
        [
            "-hide_banner", "-loglevel", "error", "-nostdin", "-f", codec, "-i", "tcp://127.0.0.1:\(port)", "-f",
            "framemd5", "-",
        ])
    let ours = directory.path("ours.y4m")
    let receiver = try BackgroundProcess(
        TestPaths.codecsExecutable.path, ["stream", "receive", "tcp://127.0.0.1:\(port)", "-o", ours])
    let ffmpegResult = ffmpeg.wait()
    let receiverResult = receiver.wait()
    let serverResult = server.wait()
    #expect(serverResult.status == 0, "\(serverResult.stderr)")
    #expect(ffmpegResult.status == 0, "\(ffmpegResult.stderr)")
    #expect(receiverResult.status == 0, "\(receiverResult.stderr)")

    let theirs = parseFrameMD5(String(decoding: ffmpegResult.stdout, as: UTF8.self))
    let mine = try ffmpegFrameMD5(path: ours)
    #expect(theirs.count == 40)
    #expect(mine == theirs)
}

/// `codecs stream receive` as a client of FFmpeg's own TCP server
/// (`ffmpeg -re -i IN -c:v libx264 -f h264 tcp://…?listen`): our frames are
/// bit-identical to FFmpeg's decode of the same encoding.
@Test(arguments: [("h264", "libx264"), ("hevc", "libx265")], DecodePath.allCases)
func ourReceiverDecodesFFmpegsServer(_ codec: (format: String, encoder: String), path: DecodePath) throws {
    let (format, encoder) = codec
    let directory = try TemporaryDirectory()
    let clip = directory.path("clip.y4m")
    try writeClip(to: clip, frames: 30)
    // The same single-threaded encoding twice: once to a file for the
    // reference, once over TCP.
    let encode =
        ["-c:v", encoder, "-preset", "veryfast", "-threads", "1"]
        + (encoder == "libx265" ? ["-x265-params", "pools=none:frame-threads=1:log-level=error"] : [])
    let reference = directory.path("reference.\(format)")
    try runChecked(
        "ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-i", clip] + encode + ["-f", format, reference])

    let port = try freePort()
    let server = try BackgroundProcess(
        "ffmpeg",
        ["-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-i", clip] + encode + [
            "-f", format, "tcp://127.0.0.1:\(port)?listen",
        ])
    defer { server.terminate() }
    let ours = directory.path("ours.y4m")
    let receiver = try path.runCodecs(
        ["stream", "receive", "tcp://127.0.0.1:\(port)", "-o", ours], reference: reference, in: directory)
    let serverResult = server.wait()
    #expect(serverResult.status == 0, "\(serverResult.stderr)")
    #expect(receiver.status == 0, "\(receiver.stderr)")
    // Every picture came the way asked (the summary names the backend).
    #expect(receiver.stderr.contains("; decoder \(path.backendName)"), "\(receiver.stderr)")

    let mine = try ffmpegFrameMD5(path: ours)
    let theirs = try ffmpegFrameMD5(path: reference)
    #expect(theirs.count == 30)
    #expect(mine == theirs)
}
