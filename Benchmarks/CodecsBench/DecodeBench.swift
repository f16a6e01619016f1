import CFFmpeg
import DecodeSession
import FormatConv
import Foundation
import MediaCore

/// Frames per second through DecompressionSession against a plain libavcodec
/// send/receive loop with the same thread count and the same samples.
func benchmarkDecode(_ stream: CodedStream, threads: Int, rounds: Int, report: Report) throws {
    var oursFrames = 0
    var referenceFrames = 0
    let times = try interleaved(
        rounds,
        ours: {
            let session = try DecompressionSession(
                formatDescription: stream.description, decoder: .software, threadCount: threads)
            oursFrames = 0
            for sample in stream.samples { oursFrames += try session.decode(sample).count }
            oursFrames += try session.finish().count
        },
        reference: {
            referenceFrames = try rawLibavcodecDecode(stream, threads: threads)
        })
    guard oursFrames == referenceFrames else {
        throw MediaError.backendFailure(
            "decode \(stream.label): the session gave \(oursFrames) frames, libavcodec \(referenceFrames)")
    }
    let count = Double(oursFrames)
    report.add(
        Figure(
            name: "decode \(stream.label) (\(threads == 0 ? "auto" : String(threads)) threads)",
            ours: count / times.ours, reference: count / times.reference,
            referenceName: "plain libavcodec send/receive", unit: "frames/s", higherIsBetter: true,
            target: "≥ 0.98"))
}

/// avcodec_send_packet / avcodec_receive_frame over the samples, with the
/// description's avcC/hvcC as extradata, frame threads as the session uses;
/// `unaligned` applies every crop (`AV_CODEC_FLAG_UNALIGNED`); `checksMD5`
/// has libavcodec check HEVC's MD5 picture hashes (`AV_EF_CRCCHECK`).
/// `packetDecoded` gets the seconds each packet's send and receive calls took.
func rawLibavcodecDecode(
    _ stream: CodedStream, threads: Int, unaligned: Bool = false, checksMD5: Bool = false,
    packetDecoded: ((Double) -> Void)? = nil
) throws -> Int {
    let codecID = stream.codec == .h264 ? AV_CODEC_ID_H264 : AV_CODEC_ID_HEVC
    guard let codec = avcodec_find_decoder(codecID) else { throw MediaError.unavailable("no decoder") }
    var context = avcodec_alloc_context3(codec)
    defer { avcodec_free_context(&context) }
    let record = stream.description.record
    let padding = Int(CFFmpeg_AV_INPUT_BUFFER_PADDING_SIZE())
    let extradata = av_mallocz(record.count + padding)!.assumingMemoryBound(to: UInt8.self)
    record.withUnsafeBytes { extradata.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: record.count) }
    context!.pointee.extradata = extradata
    context!.pointee.extradata_size = Int32(record.count)
    context!.pointee.thread_count = Int32(threads)
    context!.pointee.thread_type = Int32(CFFmpeg_FF_THREAD_FRAME())
    if unaligned { context!.pointee.flags |= AV_CODEC_FLAG_UNALIGNED }
    if checksMD5 { context!.pointee.err_recognition |= AV_EF_CRCCHECK }
    guard avcodec_open2(context, codec, nil) >= 0 else { throw MediaError.backendFailure("avcodec_open2") }
    var packet = av_packet_alloc()
    var frame = av_frame_alloc()
    defer {
        av_packet_free(&packet)
        av_frame_free(&frame)
    }
    var frames = 0
    func drain() {
        while avcodec_receive_frame(context, frame) >= 0 {
            frames += 1
            av_frame_unref(frame)
        }
    }
    for (index, sample) in stream.samples.enumerated() {
        guard av_new_packet(packet, Int32(sample.data.count)) >= 0 else { throw MediaError(.outOfMemory, "packet") }
        sample.data.withUnsafeBytes {
            packet!.pointee.data.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: sample.data.count)
        }
        packet!.pointee.pts = Int64(index)
        let start = packetDecoded == nil ? 0 : monotonicNow()
        var status = avcodec_send_packet(context, packet)
        while status == CFFmpeg_AVERROR_EAGAIN() {
            drain()
            status = avcodec_send_packet(context, packet)
        }
        av_packet_unref(packet)
        drain()
        packetDecoded?(monotonicNow() - start)
    }
    avcodec_send_packet(context, nil)
    drain()
    return frames
}
