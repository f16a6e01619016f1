import DecodeSession
import EncodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO

// StreamRoundTrip: the whole CodecSessions round trip in one program.
//
//   frames ─▶ CompressionSession ─▶ AnnexBWriter ─▶ TCP (loopback) ─▶
//   AccessUnitAssembler ─▶ DecompressionSession ─▶ frames, compared with the source
//
// A sender thread encodes a synthetic clip and writes Annex-B to a socket; the
// main thread reads whatever byte counts the socket hands it, lets the
// assembler cut access units out of them, decodes, and checks each frame's
// PSNR against the frame it came from. Exit status 0 means every frame came
// back at or above the PSNR pass mark.
#if canImport(Glibc)
    import Glibc
#endif

let width = 320
let height = 240
let frameCount = 60
let frameRate: Int32 = 30
let passMark = 30.0  // dB of luma PSNR every frame must reach
let clip = SyntheticClip(width: width, height: height, frameCount: frameCount, frameRate: Int(frameRate))

/// Encodes the clip and writes it as Annex-B to `socket`, then closes it.
func sendClip(_ clip: SyntheticClip, to socket: Int32) throws {
    defer { close(socket) }
    var properties = CompressionProperties()
    properties.realTime = true  // no B-frames, no look-ahead: a frame out for every frame in
    properties.maxKeyFrameInterval = Int(frameRate)
    let encoder = try CompressionSession(width: width, height: height, codec: .h264, properties: properties)
    // Parameter sets go in front of every keyframe, so a receiver can start at any of them.
    var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
    let frameDuration = MediaTime(value: 1, timescale: frameRate)
    func send(_ samples: [CompressedSample]) throws {
        for sample in samples {
            let bytes = try writer.write(sample)
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, 0) }
                guard sent > 0 else { throw MediaError(.system, "send failed: errno \(errno)") }
                offset += sent
            }
        }
    }
    for index in 0..<frameCount {
        try send(encoder.encode(clip.frame(at: index), pts: frameDuration * Int64(index), duration: frameDuration))
    }
    try send(encoder.finish())  // frames the encoder still holds
    encoder.invalidate()
}

// A listening socket on 127.0.0.1 with a port the system picks.
let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
var address = sockaddr_in()
address.sin_family = sa_family_t(AF_INET)
address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
var addressLength = socklen_t(MemoryLayout<sockaddr_in>.size)
withUnsafeMutablePointer(to: &address) { pointer in
    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
        precondition(bind(listener, generic, addressLength) == 0 && listen(listener, 1) == 0, "cannot listen")
        precondition(getsockname(listener, generic, &addressLength) == 0, "cannot read the port")
    }
}
let serverAddress = address

// The sender: connects to the listener and streams the encoded clip.
let sender = Thread {
    var target = serverAddress
    let connection = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    let connected = withUnsafePointer(to: &target) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(connection, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    do {
        guard connected == 0 else { throw MediaError(.system, "connect failed: errno \(errno)") }
        try sendClip(clip, to: connection)
    } catch {
        print("sender: \(error)")
        close(connection)
    }
}
sender.start()

/// Reads Annex-B from `socket` until the sender closes it, decodes every
/// access unit and compares each frame with its source. Returns the number of
/// frames back and the lowest luma PSNR among them.
func receiveClip(from socket: Int32) throws -> (frames: Int, lowestPSNR: Double) {
    var assembler = AccessUnitAssembler(codec: .h264)
    var decoder: DecompressionSession? = nil
    var framesBack = 0
    var lowestPSNR = Double.infinity

    func check(_ frames: [DecodedFrame]) {
        for frame in frames {
            // The assembler times frames from the stream's own timing (VUI),
            // so pts tells which source frame this is.
            let index = Int(frame.pts.converted(toTimescale: frameRate).value)
            lowestPSNR = min(lowestPSNR, PictureQuality.psnr(frame.pixelBuffer, clip.frame(at: index)).y)
            framesBack += 1
        }
    }
    func decode(_ outputs: [AssemblerOutput]) throws {
        for output in outputs {
            switch output {
            case .sample(let sample):
                // The first sample carries the FormatDescription the decoder
                // needs; one with new parameter sets reconfigures the session.
                if decoder == nil {
                    decoder = try DecompressionSession(
                        formatDescription: sample.formatDescription,
                        output: DecoderOutputAttributes(pixelFormat: .i420))
                }
                check(try decoder!.decode(sample))
            case .dropped(let reason, let count):
                print("dropped \(count) NAL units: \(reason)")
            }
        }
    }

    // Whatever byte counts the socket hands over: the assembler finds the
    // access-unit boundaries itself.
    var chunk = [UInt8](repeating: 0, count: 1500)
    while true {
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count <= 0 { break }  // 0: the sender closed the connection
        try decode(assembler.append(chunk[..<count]))
    }
    try decode(assembler.finish())  // the last access unit ends with the stream
    check(try decoder?.finish() ?? [])  // frames the decoder still holds
    return (framesBack, lowestPSNR)
}

let connection = accept(listener, nil, nil)
let (framesBack, lowestPSNR) = try receiveClip(from: connection)
close(connection)
close(listener)

let passed = framesBack == frameCount && lowestPSNR >= passMark
print(
    "StreamRoundTrip: \(framesBack) of \(frameCount) frames back, lowest luma PSNR "
        + String(format: "%.2f dB", lowestPSNR) + " (pass: every frame back, ≥ \(passMark) dB): "
        + (passed ? "PASS" : "FAIL"))
exit(passed ? 0 : 1)
