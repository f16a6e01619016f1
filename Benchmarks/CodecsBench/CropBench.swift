import CFFmpeg
import DecodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO

/// What the SPS's crop costs a decoded picture. The stream is `frames`
/// encoded by the x264 command-line encoder with `--crop-rect 26,6,10,2`
/// (a left and a top edge that are not aligned to libavcodec's buffers,
/// which libavcodec leaves unapplied unless asked), so that:
///
/// 1. the session's decode rate on it is printed beside a plain libavcodec
///    loop with `AV_CODEC_FLAG_UNALIGNED` (libavcodec applying the same crop
///    by moving plane pointers), measured in the same run;
/// 2. the crop itself, as the session applies it to a whole decoded picture
///    (`av_frame_apply_cropping` with `AV_FRAME_CROP_UNALIGNED`: plane
///    pointers moved, no copy), is printed beside a copy of the cropped
///    picture into a buffer of its own (what a copying crop costs).
func benchmarkCrop(_ frames: [PixelBuffer], rounds: Int, report: Report) throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codecs-bench-crop-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let source = directory.appendingPathComponent("source.y4m").path
    let writer = try Y4MWriter(path: source, header: Y4MHeader(width: frames[0].width, height: frames[0].height))
    for frame in frames { try writer.write(frame) }
    try writer.close()
    let path = directory.appendingPathComponent("cropped.h264").path
    let x264 = Process()
    x264.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    x264.arguments = [
        "x264", "--quiet", "--no-progress", "--preset", "veryfast", "--crop-rect", "26,6,10,2", "-o", path, source,
    ]
    x264.standardError = FileHandle.nullDevice
    try x264.run()
    x264.waitUntilExit()
    guard x264.terminationStatus == 0 else { throw MediaError.unavailable("the x264 command-line encoder failed") }
    var stream = try CodedStream(file: path)
    stream.label = "x264 \(frames[0].height)p"
    let (width, height) = (frames[0].width - 36, frames[0].height - 8)
    guard stream.description.width == width, stream.description.height == height else {
        throw MediaError.invalidData("x264 wrote \(stream.description.width)x\(stream.description.height)")
    }

    var oursFrames = 0
    var referenceFrames = 0
    let times = try interleaved(
        rounds,
        ours: {
            let session = try DecompressionSession(
                formatDescription: stream.description, decoder: .software, threadCount: 1)
            func check(_ frames: [DecodedFrame]) throws {
                for frame in frames where frame.pixelBuffer.width != width || frame.pixelBuffer.height != height {
                    throw MediaError.backendFailure(
                        "the session gave \(frame.pixelBuffer.width)x\(frame.pixelBuffer.height)")
                }
            }
            for sample in stream.samples { try check(try session.decode(sample)) }
            try check(try session.finish())
            oursFrames = session.statistics.decoded
        },
        reference: {
            referenceFrames = try rawLibavcodecDecode(stream, threads: 1, unaligned: true)
        })
    guard oursFrames == referenceFrames else {
        throw MediaError.backendFailure("crop: the session gave \(oursFrames) frames, libavcodec \(referenceFrames)")
    }
    let count = Double(oursFrames)
    report.add(
        Figure(
            name: "decode \(stream.label) \(width)x\(height), crop 26,6,10,2 (1 thread)",
            ours: count / times.ours, reference: count / times.reference,
            referenceName: "plain libavcodec, AV_CODEC_FLAG_UNALIGNED", unit: "frames/s", higherIsBetter: true,
            target: "≥ 0.98"))

    // The crop alone, on one whole decoded picture.
    let whole = try firstWholePicture(stream)
    defer {
        var frame: UnsafeMutablePointer<AVFrame>? = whole
        av_frame_free(&frame)
    }
    let view = av_frame_alloc()!
    let copy = av_frame_alloc()!
    defer {
        var frames: [UnsafeMutablePointer<AVFrame>?] = [view, copy]
        av_frame_free(&frames[0])
        av_frame_free(&frames[1])
    }
    let repetitions = 2000
    let crop = interleaved(
        rounds + 1,
        ours: {
            for _ in 0..<repetitions {
                av_frame_unref(view)
                _ = av_frame_ref(view, whole)
                _ = av_frame_apply_cropping(view, Int32(AV_FRAME_CROP_UNALIGNED))
            }
        },
        reference: {
            for _ in 0..<repetitions {
                av_frame_unref(view)
                _ = av_frame_ref(view, whole)
                _ = av_frame_apply_cropping(view, Int32(AV_FRAME_CROP_UNALIGNED))
                av_frame_unref(copy)
                copy.pointee.format = view.pointee.format
                copy.pointee.width = view.pointee.width
                copy.pointee.height = view.pointee.height
                guard av_frame_get_buffer(copy, 0) >= 0, av_frame_copy(copy, view) >= 0 else { return }
            }
        })
    guard view.pointee.width == Int32(width), copy.pointee.width == Int32(width) else {
        throw MediaError.backendFailure("crop: \(view.pointee.width) and \(copy.pointee.width) wide, not \(width)")
    }
    report.add(
        Figure(
            name: "crop 26,6,10,2 of a whole \(frames[0].width)x\(frames[0].height) picture",
            ours: crop.ours / Double(repetitions) * 1e6, reference: crop.reference / Double(repetitions) * 1e6,
            referenceName: "the same crop plus a copy of the picture", unit: "µs/picture", higherIsBetter: false,
            target: "zero-copy"))
}

/// The first picture libavcodec decodes from `stream`, whole (its crop in
/// the frame's crop fields, not applied).
private func firstWholePicture(_ stream: CodedStream) throws -> UnsafeMutablePointer<AVFrame> {
    guard let codec = avcodec_find_decoder(AV_CODEC_ID_H264) else { throw MediaError.unavailable("no decoder") }
    var context = avcodec_alloc_context3(codec)
    defer { avcodec_free_context(&context) }
    let record = stream.description.record
    let padding = Int(CFFmpeg_AV_INPUT_BUFFER_PADDING_SIZE())
    let extradata = av_mallocz(record.count + padding)!.assumingMemoryBound(to: UInt8.self)
    record.withUnsafeBytes { extradata.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: record.count) }
    context!.pointee.extradata = extradata
    context!.pointee.extradata_size = Int32(record.count)
    context!.pointee.thread_count = 1
    context!.pointee.apply_cropping = 0
    guard avcodec_open2(context, codec, nil) >= 0 else { throw MediaError.backendFailure("avcodec_open2") }
    var packet = av_packet_alloc()
    defer { av_packet_free(&packet) }
    let frame = av_frame_alloc()!
    for sample in stream.samples {
        guard av_new_packet(packet, Int32(sample.data.count)) >= 0 else { throw MediaError(.outOfMemory, "packet") }
        sample.data.withUnsafeBytes {
            packet!.pointee.data.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: sample.data.count)
        }
        _ = avcodec_send_packet(context, packet)
        av_packet_unref(packet)
        if avcodec_receive_frame(context, frame) >= 0 { return frame }
    }
    _ = avcodec_send_packet(context, nil)
    if avcodec_receive_frame(context, frame) >= 0 { return frame }
    var failed: UnsafeMutablePointer<AVFrame>? = frame
    av_frame_free(&failed)
    throw MediaError.backendFailure("no picture decoded")
}
