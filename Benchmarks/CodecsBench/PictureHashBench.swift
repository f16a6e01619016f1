import DecodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO

/// What checking HEVC's decoded picture hash costs: `frames` encoded by the
/// x265 command-line encoder with `--hash 1` (an MD5 of each picture), decoded
/// by the session with ``DecompressionSession/verifiesPictureHashes`` beside a
/// plain libavcodec loop that checks the same MD5s itself
/// (`err_recognition = AV_EF_CRCCHECK`), one thread each, in the same run.
func benchmarkPictureHash(_ frames: [PixelBuffer], rounds: Int, report: Report) throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codecs-bench-hash-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let source = directory.appendingPathComponent("source.y4m").path
    let writer = try Y4MWriter(path: source, header: Y4MHeader(width: frames[0].width, height: frames[0].height))
    for frame in frames { try writer.write(frame) }
    try writer.close()
    let path = directory.appendingPathComponent("hashed.hevc").path
    let x265 = Process()
    x265.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    x265.arguments = [
        "x265", "--log-level", "error", "--no-progress", "--preset", "ultrafast", "--hash", "1", "-o", path, source,
    ]
    x265.standardError = FileHandle.nullDevice
    try x265.run()
    x265.waitUntilExit()
    guard x265.terminationStatus == 0 else { throw MediaError.unavailable("the x265 command-line encoder failed") }
    var stream = try CodedStream(file: path)
    stream.label = "x265 \(frames[0].height)p"

    var matched = 0
    var referenceFrames = 0
    let times = try interleaved(
        rounds,
        ours: {
            let session = try DecompressionSession(
                formatDescription: stream.description, decoder: .software, threadCount: 1)
            session.verifiesPictureHashes = true
            for sample in stream.samples { _ = try session.decode(sample) }
            _ = try session.finish()
            matched = session.pictureHashStatistics.matched
        },
        reference: {
            referenceFrames = try rawLibavcodecDecode(stream, threads: 1, checksMD5: true)
        })
    guard matched == stream.samples.count, referenceFrames == matched else {
        throw MediaError.backendFailure(
            "picture hash: \(matched) of \(stream.samples.count) pictures matched, libavcodec gave \(referenceFrames)")
    }
    let count = Double(matched)
    report.add(
        Figure(
            name: "decode \(stream.label), MD5 picture hash checked (1 thread)",
            ours: count / times.ours, reference: count / times.reference,
            referenceName: "plain libavcodec, AV_EF_CRCCHECK", unit: "frames/s", higherIsBetter: true,
            target: "≥ 0.9"))
}
