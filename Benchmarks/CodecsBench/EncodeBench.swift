import CX264
import CX265
import EncodeSession
import FormatConv
import Foundation
import MediaCore

/// Frames per second through CompressionSession against a plain libx264 /
/// libx265 loop with the same parameters and the same frames.
func benchmarkEncode(
    _ frames: [PixelBuffer], codec: CodecType, settings: EncodeSettings, rounds: Int, report: Report
) throws {
    var oursBytes = 0
    var referenceBytes = 0
    let times = try interleaved(
        rounds,
        ours: {
            let session = try CompressionSession(
                width: frames[0].width, height: frames[0].height, codec: codec, encoder: .software,
                properties: settings.properties())
            oursBytes = 0
            for (index, frame) in frames.enumerated() {
                for sample in try session.encode(
                    frame, pts: MediaTime(value: Int64(index), timescale: 30),
                    duration: MediaTime(value: 1, timescale: 30))
                {
                    oursBytes += sample.data.count
                }
            }
            for sample in try session.finish() { oursBytes += sample.data.count }
        },
        reference: {
            referenceBytes =
                codec == .h264
                ? try rawX264Encode(frames, settings: settings) : try rawX265Encode(frames, settings: settings)
        })
    let count = Double(frames.count)
    let name = codec == .h264 ? "x264" : "x265"
    report.add(
        Figure(
            name: "encode \(name) \(frames[0].width)x\(frames[0].height) \(settings.preset)",
            ours: count / times.ours, reference: count / times.reference, referenceName: "plain lib\(name) loop",
            unit: "frames/s", higherIsBetter: true, target: "≥ 0.98"))
    if abs(oursBytes - referenceBytes) > referenceBytes / 100 {
        report.notes.append(
            "encode \(name): session produced \(oursBytes) bytes, the plain loop \(referenceBytes): settings differ")
    }
}

/// x264 configured exactly as the session's x264 backend configures it.
/// `frameEncoded` gets the seconds each `x264_encoder_encode` call took.
func rawX264Encode(_ frames: [PixelBuffer], settings: EncodeSettings, frameEncoded: ((Double) -> Void)? = nil)
    throws -> Int
{
    var param = try rawX264Parameters(settings, width: frames[0].width, height: frames[0].height)
    guard let encoder = CX264_encoder_open(&param) else { throw MediaError.backendFailure("x264_encoder_open") }
    defer { x264_encoder_close(encoder) }
    var bytes = 0
    var nals: UnsafeMutablePointer<x264_nal_t>?
    var count: Int32 = 0
    var pictureOut = x264_picture_t()
    for (index, frame) in frames.enumerated() {
        var picture = x264_picture_t()
        x264_picture_init(&picture)
        picture.i_pts = Int64(index) * 3000
        picture.img.i_csp = CX264_CSP_I420()
        picture.img.i_plane = 3
        frame.withUnsafeMutableBytes(ofPlane: 0) { y, yStride in
            frame.withUnsafeMutableBytes(ofPlane: 1) { u, uStride in
                frame.withUnsafeMutableBytes(ofPlane: 2) { v, vStride in
                    picture.img.plane.0 = y.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    picture.img.plane.1 = u.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    picture.img.plane.2 = v.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    picture.img.i_stride.0 = Int32(yStride)
                    picture.img.i_stride.1 = Int32(uStride)
                    picture.img.i_stride.2 = Int32(vStride)
                    let start = frameEncoded == nil ? 0 : monotonicNow()
                    let size = x264_encoder_encode(encoder, &nals, &count, &picture, &pictureOut)
                    frameEncoded?(monotonicNow() - start)
                    if size > 0 { bytes += Int(size) }
                }
            }
        }
    }
    while x264_encoder_delayed_frames(encoder) > 0 {
        let size = x264_encoder_encode(encoder, &nals, &count, nil, &pictureOut)
        if size <= 0 { break }
        bytes += Int(size)
    }
    return bytes
}

/// The `x264_param_t` the session's x264 backend makes of `settings`.
func rawX264Parameters(_ settings: EncodeSettings, width: Int, height: Int) throws -> x264_param_t {
    var param = x264_param_t()
    let tune: String? = settings.realTime ? "zerolatency" : nil
    let status: Int32
    if let tune {
        status = x264_param_default_preset(&param, settings.preset, tune)
    } else {
        status = x264_param_default_preset(&param, settings.preset, nil)
    }
    guard status == 0 else { throw MediaError.invalidArgument("x264 preset \(settings.preset)") }
    param.i_log_level = CX264_LOG_ERROR()
    param.i_width = Int32(width)
    param.i_height = Int32(height)
    param.i_csp = CX264_CSP_I420()
    param.i_bitdepth = 8
    param.b_annexb = 0
    param.b_repeat_headers = 0
    param.b_aud = 0
    param.i_timebase_num = 1
    param.i_timebase_den = 90_000
    param.i_fps_num = 30
    param.i_fps_den = 1
    // Constant frame rate, as the session configures it.
    param.b_vfr_input = 0
    if let threads = settings.threadCount { param.i_threads = Int32(threads) }
    param.i_keyint_max = Int32(settings.keyint)
    param.i_scenecut_threshold = 0
    if settings.realTime { param.i_bframe = 0 }
    if let bitRate = settings.bitRate {
        param.rc.i_rc_method = CX264_RC_ABR()
        param.rc.i_bitrate = Int32(bitRate / 1000)
        if settings.constantBitRate {
            param.i_nal_hrd = X264_NAL_HRD_CBR
            param.rc.b_filler = 1
            param.rc.i_vbv_max_bitrate = Int32(bitRate / 1000)
            param.rc.i_vbv_buffer_size = Int32(bitRate / 1000)
        }
    } else {
        param.rc.i_rc_method = CX264_RC_CRF()
        param.rc.f_rf_constant = Float(settings.crf)
    }
    return param
}

/// x265 configured exactly as the session's x265 backend configures it.
func rawX265Encode(_ frames: [PixelBuffer], settings: EncodeSettings) throws -> Int {
    guard let api = CX265_api_get(8) else { throw MediaError.unavailable("x265_api_get(8)") }
    guard let param = api.pointee.param_alloc() else { throw MediaError(.outOfMemory, "x265 param_alloc") }
    defer { api.pointee.param_free(param) }
    let tune: String? = settings.realTime ? "zerolatency" : nil
    let status: Int32
    if let tune {
        status = api.pointee.param_default_preset(param, settings.preset, tune)
    } else {
        status = api.pointee.param_default_preset(param, settings.preset, nil)
    }
    guard status >= 0 else { throw MediaError.invalidArgument("x265 preset \(settings.preset)") }
    param.pointee.logLevel = CX265_LOG_ERROR()
    param.pointee.sourceWidth = Int32(frames[0].width)
    param.pointee.sourceHeight = Int32(frames[0].height)
    param.pointee.internalCsp = CX265_CSP_I420()
    param.pointee.internalBitDepth = 8
    param.pointee.fpsNum = 30
    param.pointee.fpsDenom = 1
    param.pointee.bAnnexB = 0
    param.pointee.bRepeatHeaders = 0
    param.pointee.bEnableAccessUnitDelimiters = 0
    if let threads = settings.threadCount {
        guard api.pointee.param_parse(param, "pools", String(threads)) == 0 else {
            throw MediaError.invalidArgument("x265 pools \(threads)")
        }
        param.pointee.frameNumThreads = Int32(min(threads, 16))
    }
    param.pointee.bOpenGOP = 0
    param.pointee.keyframeMax = Int32(settings.keyint)
    param.pointee.keyframeMin = 1
    param.pointee.scenecutThreshold = 0
    if settings.realTime { param.pointee.bframes = 0 }
    param.pointee.rc.rateControlMode = CX265_RC_CRF()
    param.pointee.rc.rfConstant = settings.crf
    guard let encoder = api.pointee.encoder_open(param) else { throw MediaError.backendFailure("x265 encoder_open") }
    defer { api.pointee.encoder_close(encoder) }
    let pictureIn = api.pointee.picture_alloc()!
    let pictureOut = api.pointee.picture_alloc()!
    defer {
        api.pointee.picture_free(pictureIn)
        api.pointee.picture_free(pictureOut)
    }
    api.pointee.picture_init(param, pictureIn)
    api.pointee.picture_init(param, pictureOut)
    var bytes = 0
    var nals: UnsafeMutablePointer<x265_nal>?
    var count: UInt32 = 0
    for (index, frame) in frames.enumerated() {
        pictureIn.pointee.pts = Int64(index)
        frame.withUnsafeMutableBytes(ofPlane: 0) { y, yStride in
            frame.withUnsafeMutableBytes(ofPlane: 1) { u, uStride in
                frame.withUnsafeMutableBytes(ofPlane: 2) { v, vStride in
                    pictureIn.pointee.planes.0 = y.baseAddress
                    pictureIn.pointee.planes.1 = u.baseAddress
                    pictureIn.pointee.planes.2 = v.baseAddress
                    pictureIn.pointee.stride.0 = Int32(yStride)
                    pictureIn.pointee.stride.1 = Int32(uStride)
                    pictureIn.pointee.stride.2 = Int32(vStride)
                    if api.pointee.encoder_encode(encoder, &nals, &count, pictureIn, pictureOut) > 0 {
                        for nal in 0..<Int(count) { bytes += Int(nals![nal].sizeBytes) }
                    }
                }
            }
        }
    }
    while api.pointee.encoder_encode(encoder, &nals, &count, nil, pictureOut) > 0 {
        for nal in 0..<Int(count) { bytes += Int(nals![nal].sizeBytes) }
    }
    return bytes
}
