import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// `codecs`: the command-line face of CodecSessions. Each subcommand lives in
/// its own file as `run<Name>(_ arguments: [String]) -> Int32`.
let usage = """
    usage: codecs <command> [options]

    commands:
      probe [--json]                       libraries, encoders, decoders, VA-API devices
      encode  -i IN.y4m -o OUT [options]   raw video to H.264/HEVC
      decode  -i IN -o OUT.y4m [options]   H.264/HEVC to raw video
      convert -i IN -o OUT [options]       between Annex-B and MP4/MKV, change NAL length size
      inspect IN [--json] [--nals]         NAL units, access units, parameter sets
      stream serve -i IN.y4m --port N      serve Annex-B over TCP
      stream receive tcp://HOST:PORT -o OUT.y4m
      stream send -i IN URL                publish over RTP, SRT, RTSP, RTMP, MPEG-TS/UDP or HLS
      stream receive URL|IN.sdp -o OUT     play RTP, SRT, RTSP, RTMP, MPEG-TS/UDP or HLS
      demo                                 encode → RTP (or TCP) → decode round trip with a report

    `codecs <command> --help` describes a command's options.
    """

let commands: [String: ([String]) -> Int32] = [
    "probe": runProbe,
    "encode": runEncode,
    "decode": runDecode,
    "convert": runConvert,
    "inspect": runInspect,
    "stream": runStream,
    "demo": runDemo,
]

// The library writes nothing to standard error itself; the tool prints
// FFmpeg's lines there, as FFmpeg's own logger did (the sessions' messages are
// in the tool's own reports; a command that serves or reconnects installs the
// handler again with its label).
useCommandLog()

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, name != "--help", name != "-h", name != "help" else {
    print(usage)
    exit(arguments.isEmpty ? 2 : 0)
}
guard let command = commands[name] else {
    printError("codecs: unknown command '\(name)'\n\n\(usage)")
    exit(2)
}
StopSignal.install()
var status = command(Array(arguments.dropFirst()))
if let signal = StopSignal.requested {
    printError("codecs \(name): stopped by \(StopSignal.name(signal)); what was written so far is complete")
    if status == 0 { status = 128 + signal }
}
// A report that could not be written (a full disk, `> /dev/full`, a closed
// pipe) is a failure, not a silent success.
if !flushStandardOutput() {
    let code = errno
    printError("codecs \(name): cannot write to standard output: \(String(cString: strerror(code)))")
    exit(status == 0 ? 1 : status)
}
exit(status)
