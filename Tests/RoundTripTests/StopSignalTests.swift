import Foundation
import MediaCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// SIGINT and SIGTERM stop `codecs` cleanly: what was written is whole and
/// readable, and the exit status says which signal stopped it.
@Suite(.serialized) struct StopSignalTests {
    /// `stream receive` without `--frames` is stopped by a signal: every
    /// frame it reports is in the Y4M file, and the file ends on a whole frame.
    @Test(arguments: [SIGINT, SIGTERM])
    func streamReceiveEndsWholeOnASignal(signal: Int32) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clip = directory.path("clip.y4m")
        try writeClip(to: clip, frames: 60)
        let server = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "serve", "-i", clip, "--port", "0", "--listen", "127.0.0.1", "--loop", "--keyint", "15"])
        defer { server.terminate() }
        let port = try #require(server.waitForError { listeningPort($0) }, "\(server.standardError)")
        let output = directory.path("received.y4m")
        let receiver = try BackgroundProcess(
            TestPaths.codecsExecutable.path, ["stream", "receive", "tcp://127.0.0.1:\(port)", "-o", output])
        // Wait until some frames are on disk, then stop it.
        let frameBytes = 320 * 240 * 3 / 2 + 6
        for _ in 0..<500 {
            let size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
            if size > 20 * frameBytes { break }
            usleep(20_000)
        }
        kill(receiver.process.processIdentifier, signal)
        let result = receiver.wait()
        #expect(result.status == 128 + signal, "\(result.stderr)")
        #expect(result.stderr.contains("stopped by \(signal == SIGINT ? "SIGINT" : "SIGTERM")"), "\(result.stderr)")
        let written = result.stderr.split(separator: " ").firstIndex(of: "wrote").flatMap { index in
            Int(result.stderr.split(separator: " ")[index + 1])
        }
        let frames = try #require(written, "\(result.stderr)")
        #expect(frames >= 20)
        // ffmpeg reads exactly that many frames, and the file has no torn frame at its end.
        #expect(try ffmpegFrameMD5(path: output).count == frames)
        let size = try #require(FileManager.default.attributesOfItem(atPath: output)[.size] as? Int)
        let header = try #require(FileManager.default.contents(atPath: output)?.firstIndex(of: 0x0A)).advanced(by: 1)
        #expect(size == header + frames * frameBytes)
    }

    /// `encode` from a live pipe into MP4, stopped by SIGINT: the file gets
    /// its index and holds every frame the summary reports.
    @Test func encodeToMP4FinishesTheFileOnSIGINT() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let output = directory.path("live.mp4")
        let script = """
            ffmpeg -loglevel error -re -f lavfi -i testsrc2=size=320x240:rate=30 -pix_fmt yuv420p \
                -f yuv4mpegpipe - 2>/dev/null | "$0" encode -i - -o "$1" &
            pid=$!
            sleep 2
            kill -INT $pid
            wait $pid
            echo "status=$?"
            """
        let result = try runProcess("/bin/sh", ["-c", script, TestPaths.codecsExecutable.path, output])
        let stdout = String(decoding: result.stdout, as: UTF8.self)
        #expect(stdout.contains("status=130"), "\(stdout)\n\(result.stderr)")
        #expect(result.stderr.contains("stopped by SIGINT"), "\(result.stderr)")
        let words = result.stderr.split(whereSeparator: { $0 == " " || $0 == "\n" })
        let encoded = words.firstIndex(of: "encoded").flatMap { Int(words[$0 + 1]) }
        let frames = try #require(encoded, "\(result.stderr)")
        #expect(frames > 0)
        let probed = try runChecked(
            "ffprobe",
            [
                "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames",
                "-of", "csv=p=0", output,
            ])
        #expect(String(decoding: probed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "\(frames)")
    }
}
