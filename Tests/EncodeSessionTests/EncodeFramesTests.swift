// CompressionSession.encodeFrames: the frames, bytes and media time it
// reports against the stream it wrote, as ffprobe and ffmpeg read it.
import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

@testable import EncodeSession

@Suite struct EncodeFramesTests {
    /// Encodes `clip` through `encodeFrames` into an Annex-B stream.
    static func encode(
        _ clip: SyntheticClip, frameLimit: Int? = nil, stopAfter: Int? = nil
    ) throws -> (report: CompressionSession.FramesReport, stream: [UInt8], progress: [Int]) {
        let session = try CompressionSession(
            width: clip.width, height: clip.height, codec: .h264, encoder: .software)
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        var stream: [UInt8] = []
        var next = 0
        var progress: [Int] = []
        let report = try session.encodeFrames(
            frameDuration: clip.frameDuration, frameLimit: frameLimit,
            shouldStop: { stopAfter.map { next >= $0 } ?? false },
            nextFrame: { () throws(MediaError) -> PixelBuffer? in
                guard next < clip.frameCount else { return nil }
                next += 1
                return clip.frame(at: next - 1)
            },
            write: { (sample) throws(MediaError) -> Int in
                let bytes = try writer.write(sample)
                stream += bytes
                return bytes.count
            },
            progress: { frames, bytes in
                progress.append(frames)
                #expect(bytes <= stream.count)
            })
        return (report, stream, progress)
    }

    /// Every frame of the clip: the report's frames and bytes are the
    /// stream's (ffprobe's packets, the bytes written), its media time the
    /// frames at the clip's rate, and ffmpeg decodes as many frames.
    @Test func reportMatchesTheStream() throws {
        let clip = SyntheticClip(width: 160, height: 96, frameCount: 12)
        let (report, stream, progress) = try Self.encode(clip)
        #expect(report.frames == 12)
        #expect(report.bytes == stream.count)
        #expect(report.droppedFrames == 0)
        #expect(report.mediaSeconds == 12.0 / 30.0)
        #expect(report.bitsPerSecond == Double(stream.count) * 8 / (12.0 / 30.0))
        #expect(progress == Array(1...12))
        let directory = try TemporaryDirectory()
        let path = try writeAnnexBFile(stream, codec: .h264, in: directory)
        #expect(try ffprobePacketCounts(path: path).packets == 12)
        #expect(try ffmpegFrameMD5(path: path, everyFrame: true).count == 12)
    }

    /// A frame limit and a stop each end the loop; the session is finished
    /// and the stream holds exactly the frames submitted.
    @Test(arguments: [(7, nil), (nil, 5)] as [(Int?, Int?)])
    func limitAndStopEndTheLoop(frameLimit: Int?, stopAfter: Int?) throws {
        let clip = SyntheticClip(width: 160, height: 96, frameCount: 12)
        let (report, stream, _) = try Self.encode(clip, frameLimit: frameLimit, stopAfter: stopAfter)
        let expected = frameLimit ?? stopAfter!
        #expect(report.frames == expected)
        let directory = try TemporaryDirectory()
        let path = try writeAnnexBFile(stream, codec: .h264, in: directory)
        #expect(try ffmpegFrameMD5(path: path, everyFrame: true).count == expected)
    }

    /// A frame duration that is not a positive time is refused before any frame.
    @Test func invalidFrameDurationIsRefused() throws {
        let session = try CompressionSession(width: 160, height: 96, codec: .h264, encoder: .software)
        var asked = 0
        do {
            _ = try session.encodeFrames(
                frameDuration: .invalid,
                nextFrame: { () throws(MediaError) -> PixelBuffer? in
                    asked += 1
                    return nil
                },
                write: { _ throws(MediaError) -> Int in 0 })
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidArgument)
        }
        #expect(asked == 0)
    }
}
