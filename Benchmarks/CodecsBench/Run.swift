import Foundation
import MediaCore

/// Runs the selected sections in order.
func runBenchmarks(_ options: BenchOptions, _ report: Report) throws {
    let quick = options.quick
    let rounds = quick ? 1 : 2
    func log(_ text: String) { FileHandle.standardError.write(Data("codecs-bench: \(text)\n".utf8)) }

    // Synthetic workloads: 720p always, 1080p in the full run.
    // (1080p only for the sections that measure it: FormatConv and decoding.)
    let wants1080 = options.sections.contains("formatconv") || options.sections.contains("decode")
    let sizes: [(Int, Int, Int)] =
        options.inputsOnly || options.sections == ["rmcat"]
        ? [] : quick || !wants1080 ? [(1280, 720, quick ? 60 : 300)] : [(1280, 720, 300), (1920, 1080, 300)]
    var streams: [CodedStream] = []
    var frames720: [PixelBuffer] = []
    for (width, height, count) in sizes {
        log("generating \(count) frames of \(width)x\(height) and encoding them with x264")
        let frames = syntheticFrames(width: width, height: height, count: count)
        if width == 1280 { frames720 = frames }
        let stream = try encodeStream(
            frames, codec: .h264, settings: EncodeSettings(preset: "veryfast"), label: "x264 \(height)p")
        streams.append(stream)
        if options.sections.contains("formatconv") || options.sections.contains("decode") {
            if !quick || width == 1280, options.sections.contains("formatconv"), height == 720 {
                let hevcFrames = Array(frames.prefix(quick ? 30 : 120))
                log("encoding \(hevcFrames.count) frames with x265 for the HEVC conversions")
                streams.append(
                    try encodeStream(
                        hevcFrames, codec: .hevc, settings: EncodeSettings(preset: "ultrafast"),
                        label: "x265 \(height)p"))
            }
        }
    }
    for path in options.inputs {
        log("reading \(path)")
        streams.append(try CodedStream(file: path))
    }

    if options.sections.contains("formatconv") {
        for stream in streams {
            log("FormatConv on \(stream.label): \(stream.samples.count) samples, \(stream.sampleBytes) bytes")
            do {
                try benchmarkFormatConv(stream, quick: quick, report: report)
            } catch {
                report.notes.append("FormatConv on \(stream.label) not measured: \(error)")
            }
        }
        if let stream = streams.first(where: { $0.codec == .h264 }) {
            log("TCP sender on \(stream.label): gather list and sendmsg against a joined copy per access unit")
            try benchmarkTCPSender(stream, rounds: rounds, report: report)
        }
    }
    if options.sections.contains("pixels") {
        log("pixels: NV12 → I420 and P010 → I010 repacking (a GPU's pictures to planar outputs) against libswscale")
        try benchmarkRepacking(quick: quick, rounds: rounds, report: report)
    }
    if options.sections.contains("encode") && !frames720.isEmpty {
        let frames = Array(frames720.prefix(quick ? 60 : 150))
        log("encode: x264 and x265 through the session and the plain loops, \(frames.count) frames")
        try benchmarkEncode(
            frames, codec: .h264, settings: EncodeSettings(preset: "veryfast"), rounds: rounds, report: report)
        try benchmarkEncode(
            Array(frames.prefix(quick ? 20 : 60)), codec: .hevc, settings: EncodeSettings(preset: "ultrafast"),
            rounds: rounds, report: report)
    }
    if options.sections.contains("decode") {
        for stream in streams where stream.codec == .h264 || !quick {
            log("decode: \(stream.label)")
            do {
                try benchmarkDecode(stream, threads: 1, rounds: rounds + 1, report: report)
                try benchmarkDecode(stream, threads: 0, rounds: rounds + 1, report: report)
            } catch {
                report.notes.append("decode \(stream.label) not measured: \(error)")
            }
        }
    }
    if options.sections.contains("decode") && !frames720.isEmpty {
        log("decode: the SPS's crop (x264 --crop-rect), through the session and a plain libavcodec loop")
        do {
            try benchmarkCrop(Array(frames720.prefix(quick ? 60 : 150)), rounds: rounds + 1, report: report)
        } catch {
            report.notes.append("crop not measured: \(error)")
        }
        log("decode: HEVC MD5 picture hashes checked (x265 --hash 1), by the session and by libavcodec")
        do {
            try benchmarkPictureHash(Array(frames720.prefix(quick ? 30 : 90)), rounds: rounds + 1, report: report)
        } catch {
            report.notes.append("picture hash check not measured: \(error)")
        }
    }
    if options.sections.contains("roundtrip") && !frames720.isEmpty {
        log("round trip: 720p zero-latency")
        try benchmarkRoundTrip(Array(frames720.prefix(quick ? 60 : 300)), report: report)
    }
    if options.sections.contains("latency") {
        log("latency: codecs demo --low-latency, 720p30 over RTP on the loopback, per stage")
        try benchmarkLatency(frames: quick ? 150 : 300, report: report)
    }
    if options.sections.contains("page") {
        log("page: codecs demo --low-latency --http, the player page in headless Chromium beside the RTP receiver")
        try benchmarkPageLatency(frames: quick ? 150 : 300, report: report)
    }
    if options.sections.contains("webrtc") {
        log("webrtc: codecs demo --low-latency, then codecs stream serve --whep to the WHEP page in headless Chromium")
        try benchmarkWebRTCLatency(frames: quick ? 150 : 300, report: report)
    }
    if options.sections.contains("nack"), let stream = streams.first(where: { $0.codec == .h264 }) {
        log("nack: seeded 1/3/5 % loss over RTP on the loopback, with and without NACK, \(stream.label)")
        try benchmarkNACK(stream, frames: quick ? 60 : 150, report: report)
    }
    if options.sections.contains("transports") {
        let frames = syntheticFrames(width: 640, height: 360, count: quick ? 30 : 150)
        log("transports: loopback latency of SRT, MPEG-TS/UDP, RTSP and RTMP, \(frames.count) frames at 30 fps each")
        try benchmarkTransports(frames, report: report)
    }
    if options.sections.contains("floor") && !frames720.isEmpty {
        log("floor: one live 720p30 pipeline beside the raw libraries' encode and decode times")
        let frames = Array(frames720.prefix(quick ? 45 : 150))
        _ = try benchmarkLatencyFloor(frames, rounds: quick ? 1 : 3, report: report)
        // The session's encoder against the plain libx264 loop with the live settings.
        try benchmarkEncode(
            frames, codec: .h264, settings: liveSettings(preset: "ultrafast"), rounds: quick ? 1 : 3, report: report)
    }
    var density: [String: [(DensityRun, FFmpegDensityRun?)]] = [:]
    var decoders: [(DensityRun, FFmpegDensityRun?)] = []
    var fanOut: [FanOutRun] = []
    if options.sections.contains("density") && !frames720.isEmpty {
        let presets = quick ? ["ultrafast"] : ["ultrafast", "superfast"]
        let counts = quick ? [2] : [1, 2, 4, 8, 16]
        let rows = options.densityRows ?? presets.flatMap { preset in counts.map { (preset: preset, count: $0) } }
        (density, decoders) = try benchmarkDensity(
            Array(frames720.prefix(quick ? 45 : 90)), rows: rows,
            decoderCounts: options.densityRows == nil ? counts : [],
            defaultThreadsCount: quick || options.densityRows != nil ? nil : 8, warmUp: quick ? 15 : 30,
            report: report, log: log)
    }
    if options.sections.contains("fanout") && !frames720.isEmpty {
        fanOut = try benchmarkFanOut(
            Array(frames720.prefix(quick ? 45 : 90)), counts: quick ? [1, 200] : [1, 10, 50, 100, 200],
            report: report, log: log)
        try benchmarkWHEPFanOut(
            Array(frames720.prefix(quick ? 45 : 90)), counts: quick ? [1, 200] : [1, 10, 50, 100, 200],
            seconds: options.whepSeconds ?? (quick ? 3 : 60), reference: fanOut, report: report, log: log)
    }
    if options.sections.contains("whep") && !options.sections.contains("fanout") && !frames720.isEmpty {
        // The WHEP rows alone, without the RTP reference (e.g. under callgrind).
        try benchmarkWHEPFanOut(
            Array(frames720.prefix(quick ? 45 : 90)),
            counts: options.whepCounts ?? (quick ? [1, 200] : [1, 10, 50, 100, 200]),
            seconds: options.whepSeconds ?? (quick ? 3 : 60), reference: [], report: report, log: log)
    }
    writeScalingCharts(
        density: density, decoders: decoders, fanOut: fanOut, jsonPath: options.jsonPath, report: report)
    if options.sections.contains("rmcat") {
        log("rmcat: the RFC 8867 cases on the seeded simulated link (congestion controller, pacer, encoder model)")
        try benchmarkRMCAT(jsonPath: options.jsonPath, report: report, log: log)
        log("rmcat: 5.1 with the real codec (x264, RTP with NACK and RTX, libavcodec) at 640x360")
        try benchmarkRMCATRealCodec(report: report, log: log)
        log("rmcat: 5.2, 5.4, 5.6 and 5.8 with the real codec, one encoder and decoder per media flow, at 640x360")
        try benchmarkRMCATRealCodecFlows(report: report, log: log)
    }
    if options.sections.contains("memory") && !frames720.isEmpty {
        log("memory: allocations per frame and peak RSS")
        try benchmarkMemory(Array(frames720.prefix(quick ? 60 : 150)), stream: streams[0], report: report)
    }
}
