import DecodeSession
import FormatConv
import MediaCore
import Synchronization
import TestSupport
import Testing

/// MediaCore's `CodecLog` receives FFmpeg's lines with their level and the
/// codec that logged them, and the sessions' own messages.
@Suite(.serialized)
struct CodecLogTests {
    /// The ffmpeg CLI's lines for a stream, at warning level or worse, as
    /// (level, codec, text): `-loglevel level+warning` prints each as
    /// "[h264 @ 0x…] [error] text".
    static func ffmpegLines(path: String) throws -> [(level: String, codec: String, text: String)] {
        let result = try runProcess(
            "ffmpeg", ["-nostdin", "-loglevel", "level+warning", "-threads", "1", "-i", path, "-f", "null", "-"])
        var lines: [(String, String, String)] = []
        for line in result.stderr.split(separator: "\n") {
            guard line.hasPrefix("["), let close = line.firstIndex(of: "]") else { continue }
            let context = line[line.index(after: line.startIndex)..<close]
            guard let at = context.range(of: " @ ") else { continue }
            var rest = line[line.index(after: close)...].drop { $0 == " " }
            guard rest.hasPrefix("["), let levelEnd = rest.firstIndex(of: "]") else { continue }
            let level = rest[rest.index(after: rest.startIndex)..<levelEnd]
            rest = rest[rest.index(after: levelEnd)...].drop { $0 == " " }
            lines.append((String(level), String(context[..<at.lowerBound]), String(rest)))
        }
        return lines
    }

    /// A slice cut short in the middle of a group of pictures: libavcodec
    /// complains about it, and the handler gets the same lines the ffmpeg CLI
    /// prints for the same bytes, with the same levels, from "ffmpeg.h264".
    @Test func handlerReceivesLibavcodecWarningsForADamagedStream() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make(
            "damage", in: directory, codec: .h264, frames: 30,
            encoderArgs: ["-bf", "0", "-g", "10", "-sc_threshold", "0"])
        var samples = try TestStreams.samples(ofFile: path, codec: .h264)
        // The sample cut to a third, its length prefix kept consistent, as a
        // cut network packet would be: the slice header is intact, so the
        // sample reaches libavcodec, which runs out of slice data.
        var data = samples[13].data
        data.removeLast(data.count * 2 / 3)
        let length = data.count - 4
        data.replaceSubrange(
            0..<4,
            with: [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)])
        samples[13].data = data
        let damagedPath = try writeAnnexBFile(try annexBStream(samples), codec: .h264, in: directory, name: "damaged")
        let expected = try Self.ffmpegLines(path: damagedPath).filter { $0.codec == "h264" }
        try #require(!expected.isEmpty, "ffmpeg reports nothing for the damaged stream")

        let received = Mutex<[LogMessage]>([])
        let previous = CodecLog.handler
        CodecLog.handler = { message in received.withLock { $0.append(message) } }
        defer { CodecLog.handler = previous }
        let session = try DecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software, threadCount: 1)
        _ = try decodeAll(session, samples)
        CodecLog.handler = previous

        let messages = received.withLock { $0 }.filter { $0.subsystem == "ffmpeg.h264" && $0.level <= .warning }
        // The damaged slice's own complaint, in ffmpeg's words and level.
        let first = try #require(expected.first)
        #expect(
            messages.contains { $0.message == first.text && $0.level.description == first.level },
            "ffmpeg: \(expected); handler: \(messages)")
        #expect(session.drops.contains { $0.pts == samples[13].pts })
        // The session's own message: decoding resumed at the next keyframe.
        #expect(samples.map(\.isKeyframe).enumerated().filter { $0.element }.map(\.offset) == [0, 10, 20])
        let resumed = "decoding resumed at pts \(samples[20].pts) after "
        #expect(
            received.withLock { $0 }.contains {
                $0.subsystem == "DecodeSession" && $0.level == .info && $0.message.hasPrefix(resumed)
            })
    }
}
