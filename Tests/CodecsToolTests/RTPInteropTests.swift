import Foundation
import MediaCore
import TestSupport
import Testing

/// `codecs stream send rtp://…` and `codecs stream receive rtp://…|x.sdp`
/// against FFmpeg and GStreamer, both directions, H.264 and HEVC, on
/// 127.0.0.1 only: every frame's MD5 equals FFmpeg's decode of the clip sent.
@Suite(.enabled(if: findExecutable("gst-launch-1.0") != nil, "GStreamer is installed by scripts/bootstrap"))
struct RTPInteropTests {
    struct Clip: Sendable, CustomStringConvertible {
        var codec: String
        var description: String { codec }
        var fileExtension: String { codec == "h264" ? "h264" : "hevc" }
        var gstName: String { codec == "h264" ? "H264" : "H265" }
        var gstElement: String { codec == "h264" ? "h264" : "h265" }
    }

    static let clips = [Clip(codec: "h264"), Clip(codec: "hevc")]

    /// A 40-frame clip with B-frames and a keyframe every 12, and FFmpeg's per-frame MD5s.
    static func clip(_ clip: Clip, in directory: TemporaryDirectory, frames: Int = 40) throws -> (
        path: String, md5s: [String]
    ) {
        let path = directory.path("clip.\(clip.fileExtension)")
        let encoder =
            clip.codec == "h264"
            ? ["-c:v", "libx264", "-bf", "2", "-g", "12", "-sc_threshold", "0"]
            : ["-c:v", "libx265", "-x265-params", "log-level=error:bframes=2:keyint=12:min-keyint=12:scenecut=0"]
        try ffmpegTestPattern(size: "320x240", frames: frames, arguments: encoder, to: path)
        return (path, try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p"))
    }

    /// The per-frame MD5s of a Y4M file, as FFmpeg computes them.
    static func y4mMD5s(_ path: String) throws -> [String] {
        try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p")
    }

    /// The per-frame MD5s of raw I420 320x240 frames.
    static func rawMD5s(_ path: String) -> [String] {
        let data = FileManager.default.contents(atPath: path) ?? Data()
        let size = 320 * 240 * 3 / 2
        return stride(from: 0, to: data.count - size + 1, by: size).map { MD5.hex([UInt8](data[$0..<$0 + size])) }
    }

    static var codecs: String { TestPaths.codecsExecutable.path }

    /// `codecs stream receive rtp://@127.0.0.1:PORT -o OUTPUT --timeout 2`
    /// plus `extra`, started and listening.
    static func startReceiver(
        port: UInt16, output: String, in directory: TemporaryDirectory, _ extra: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> BackgroundProcess {
        let receiver = try BackgroundProcess(
            codecs, ["stream", "receive", "rtp://@127.0.0.1:\(port)", "-o", output, "--timeout", "2"] + extra,
            in: directory)
        #expect(waitUntilUDPPortIsBound(port), "the receiver did not start", sourceLocation: sourceLocation)
        return receiver
    }

    @Test(arguments: clips)
    func ourSenderToFFmpeg(_ clip: Clip) throws {
        let directory = try TemporaryDirectory()
        let (path, md5s) = try Self.clip(clip, in: directory)
        let port = try freeRTPPortPair()
        let sdp = directory.path("stream.sdp")
        // The SDP first (the sender waits), then FFmpeg, then the packets.
        let sender = try BackgroundProcess(
            Self.codecs,
            // Paced: a burst of unpaced datagrams can overflow FFmpeg's socket
            // buffer on a busy machine, and FFmpeg conceals what it lost.
            ["stream", "send", "-i", path, "rtp://127.0.0.1:\(port)", "--sdp", sdp, "--wait", "1"],
            in: directory)
        for _ in 0..<500 where !FileManager.default.fileExists(atPath: sdp) { usleep(10_000) }
        let output = directory.path("ffmpeg.md5")
        let receiver = try BackgroundProcess(
            "ffmpeg",
            [
                "-nostdin", "-v", "error", "-protocol_whitelist", "file,udp,rtp", "-i", sdp, "-fps_mode", "passthrough",
                "-frames:v", "\(md5s.count)", "-f", "framemd5", output,
            ], in: directory)
        let sent = sender.wait(timeout: 30)
        let received = receiver.wait(timeout: 20)
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(received.status == 0, "\(received.stderr)")
        let got = parseFrameMD5(String(decoding: FileManager.default.contents(atPath: output) ?? Data(), as: UTF8.self))
        #expect(got == md5s, "ffmpeg decoded \(got.count) of \(md5s.count) frames")
    }

    @Test(arguments: clips)
    func ffmpegToOurReceiver(_ clip: Clip) throws {
        let directory = try TemporaryDirectory()
        let (path, md5s) = try Self.clip(clip, in: directory)
        let port = try freeRTPPortPair()
        let output = directory.path("out.y4m")
        let receiver = try Self.startReceiver(port: port, output: output, in: directory, ["--codec", clip.codec])
        let sent = try runProcess(
            "ffmpeg",
            ["-nostdin", "-v", "error", "-re", "-i", path, "-c", "copy", "-f", "rtp", "rtp://127.0.0.1:\(port)"])
        let received = receiver.wait(timeout: 20)
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(received.status == 0, "\(received.stderr)")
        #expect(try Self.y4mMD5s(output) == md5s, "\(received.stderr)")
    }

    @Test(arguments: clips)
    func ourSenderToGStreamer(_ clip: Clip) throws {
        let directory = try TemporaryDirectory()
        let (path, md5s) = try Self.clip(clip, in: directory)
        let port = try freeRTPPortPair()
        let output = directory.path("gst.yuv")
        let caps = "application/x-rtp,media=video,clock-rate=90000,encoding-name=\(clip.gstName),payload=96"
        let receiver = try BackgroundProcess(
            "gst-launch-1.0",
            [
                "-q", "-e", "udpsrc", "address=127.0.0.1", "port=\(port)", "caps=\(caps)", "!",
                "rtp\(clip.gstElement)depay", "!", "\(clip.gstElement)parse", "!", "avdec_\(clip.gstElement)", "!",
                "video/x-raw,format=I420", "!", "filesink", "location=\(output)",
            ], in: directory)
        #expect(waitUntilUDPPortIsBound(port), "gst-launch did not start")
        let sent = try runProcess(Self.codecs, ["stream", "send", "-i", path, "rtp://127.0.0.1:\(port)", "--no-pace"])
        #expect(sent.status == 0, "\(sent.stderr)")
        // gst-launch does not end by itself on a UDP source; the decoder holds
        // the last two pictures (B-frame reordering) until an end of stream,
        // so every picture before them is compared, then the process is stopped.
        let expected = md5s.count - 2
        var got: [String] = []
        for _ in 0..<200 {
            got = Self.rawMD5s(output)
            if got.count >= expected { break }
            usleep(50_000)
        }
        receiver.signal(SIGKILL)
        _ = receiver.wait(timeout: 5)
        #expect(got.count >= expected)
        #expect(Array(got.prefix(expected)) == Array(md5s.prefix(expected)))
    }

    /// NACK interop with GStreamer as the receiver: `rtpbin` in the AVPF
    /// profile with `do-retransmission` (its jitter buffer asks for each
    /// missing packet with RTCP generic NACK, sent to our sender's RTCP port)
    /// while our sender drops 3 % of its packets on purpose (seeded): our
    /// sender answers every NACK from its history and GStreamer's decode of
    /// every picture equals FFmpeg's decode of the file.
    @Test(.serialized, arguments: [(clips[0], 5), (clips[1], 11)])
    func gstreamerAsksForLostPacketsAndGetsThem(_ clip: Clip, seed: Int) throws {
        let directory = try TemporaryDirectory()
        let (path, md5s) = try Self.clip(clip, in: directory, frames: 60)
        let port = try freeRTPPortPair()
        let rtcpPort = try freeRTPPortPair()
        let output = directory.path("gst.yuv")
        let caps =
            "application/x-rtp,media=video,clock-rate=90000,encoding-name=\(clip.gstName),payload=96,"
            + "rtcp-fb-nack=(boolean)true"
        let receiver = try BackgroundProcess(
            "gst-launch-1.0",
            [
                "-q", "-e", "rtpbin", "name=b", "rtp-profile=avpf", "do-retransmission=true", "latency=1000",
                "udpsrc", "address=127.0.0.1", "port=\(port)", "caps=\(caps)", "!", "b.recv_rtp_sink_0",
                "udpsrc", "address=127.0.0.1", "port=\(port + 1)", "!", "b.recv_rtcp_sink_0",
                "b.", "!", "rtp\(clip.gstElement)depay", "!", "\(clip.gstElement)parse", "!",
                "avdec_\(clip.gstElement)", "!", "video/x-raw,format=I420", "!", "filesink", "location=\(output)",
                "b.send_rtcp_src_0", "!", "udpsink", "host=127.0.0.1", "port=\(rtcpPort)", "sync=false",
                "async=false",
            ], in: directory)
        #expect(waitUntilUDPPortIsBound(port), "gst-launch did not start")
        let stats = directory.path("out.json")
        let sent = try runProcess(
            Self.codecs,
            [
                "stream", "send", "-i", path, "rtp://127.0.0.1:\(port)", "--loss", "3", "--seed", "\(seed)",
                "--rtcp-port", "\(rtcpPort)", "--stats-json", stats,
            ])
        #expect(sent.status == 0, "\(sent.stderr)")
        var got: [String] = []
        for _ in 0..<100 {
            got = Self.rawMD5s(output)
            if got.count >= md5s.count - 2 { break }
            usleep(50_000)
        }
        receiver.signal(SIGINT)
        _ = receiver.wait(timeout: 5)
        got = Self.rawMD5s(output)
        #expect(sent.stderr.contains("dropped") && !sent.stderr.contains("dropped 0 of"), "\(sent.stderr)")
        let outbound = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats)))
                as? [String: [String: Any]])["outbound-rtp"]
        #expect((outbound?["nackCount"] as? Int ?? 0) > 0, "\(sent.stderr)")
        #expect((outbound?["retransmittedPacketsSent"] as? Int ?? 0) > 0, "\(sent.stderr)")
        // (GStreamer's decoder may hold the last pictures until its end of stream.)
        #expect(got.count >= md5s.count - 2, "\(got.count) of \(md5s.count) frames\n\(sent.stderr)")
        #expect(got == Array(md5s.prefix(got.count)), "\(sent.stderr)")
    }

    /// NACK interop with GStreamer as the sender: `rtpbin` in the AVPF
    /// profile with `rtprtxsend` keeping the packets it sent, answering
    /// generic NACKs with RTX packets (RFC 4588: payload type 97, their own
    /// SSRC, the original sequence number first). Our receiver reads the SDP
    /// (`a=rtpmap:97 rtx/90000`, `a=fmtp:97 apt=96`, and `a=rtcp:` naming the
    /// port GStreamer's RTCP leaves from and is read on, so NACKs reach it
    /// before its first sender report) and drops 3 % of the datagrams it
    /// receives on purpose (seeded, retransmissions too). Every packet
    /// dropped is asked for and repaired from an RTX packet, and every frame
    /// equals FFmpeg's decode of the file; only the clip's last frame may be
    /// missing, when its last packet is dropped: no later packet shows the
    /// gap (GStreamer sends no tail probe).
    @Test(.serialized, arguments: [(clips[0], 1), (clips[1], 5)])
    func gstreamerAnswersOurNACKsWithRTX(_ clip: Clip, seed: Int) throws {
        let directory = try TemporaryDirectory()
        let (path, md5s) = try Self.clip(clip, in: directory, frames: 60)
        let port = try freeRTPPortPair()
        let gstreamerRTCP = try freeRTPPortPair()
        let sdp = directory.path("gstreamer.sdp")
        let lines = [
            "v=0", "o=- 0 0 IN IP4 127.0.0.1", "s=GStreamer", "c=IN IP4 127.0.0.1", "t=0 0",
            "m=video \(port) RTP/AVPF 96 97", "a=rtpmap:96 \(clip.gstName)/90000", "a=rtcp-fb:96 nack",
            "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96", "a=rtcp:\(gstreamerRTCP) IN IP4 127.0.0.1",
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: sdp, atomically: true, encoding: .utf8)
        let output = directory.path("out.y4m")
        let stats = directory.path("in.json")
        let receiver = try BackgroundProcess(
            Self.codecs,
            [
                "stream", "receive", sdp, "-o", output, "--timeout", "3", "--jitter", "300", "--loss", "3", "--seed",
                "\(seed)", "--stats-json", stats,
            ], in: directory)
        #expect(waitUntilUDPPortIsBound(port), "the receiver did not start")
        // The sender runs beside the receiver: after the file ends, gst-launch
        // waits for rtpbin's BYE before it exits, which on a loaded machine
        // has been seen never to come (a sleeping pipeline, no CPU used for
        // minutes). Its end is not what is tested: it is given 20 s after the
        // receiver finished, then stopped; it must not have reported an error.
        let sender = try BackgroundProcess(
            "gst-launch-1.0",
            [
                "-q", "rtpbin", "name=b", "rtp-profile=avpf",
                "filesrc", "location=\(path)", "!", "\(clip.gstElement)parse", "!", "rtp\(clip.gstElement)pay",
                "config-interval=-1", "pt=96", "ssrc=1111", "!", "rtprtxsend",
                "payload-type-map=application/x-rtp-pt-map,96=(uint)97",
                "ssrc-map=application/x-rtp-ssrc-map,1111=(uint)2222", "max-size-packets=1000", "!",
                "b.send_rtp_sink_0",
                "b.send_rtp_src_0", "!", "udpsink", "host=127.0.0.1", "port=\(port)", "sync=true",
                "b.send_rtcp_src_0", "!", "udpsink", "host=127.0.0.1", "port=\(port + 1)",
                "bind-port=\(gstreamerRTCP)", "sync=false", "async=false",
                "udpsrc", "address=127.0.0.1", "port=\(gstreamerRTCP)", "!", "b.recv_rtcp_sink_0",
            ], in: directory)
        let received = receiver.wait(timeout: 30)
        let sent = sender.wait(timeout: 20)
        #expect(sent.status == 0 || sent.status == 128 + SIGKILL, "\(sent.stderr)")
        #expect(!sent.stderr.contains("ERROR"), "\(sent.stderr)")
        #expect(received.status == 0, "\(received.stderr)")
        let got = try Self.y4mMD5s(output)
        #expect(got.count >= md5s.count - 1, "\(got.count) of \(md5s.count) frames\n\(received.stderr)")
        #expect(got == Array(md5s.prefix(got.count)), "\(received.stderr)")
        let inbound = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats)))
                as? [String: [String: Any]])["inbound-rtp"]
        #expect(received.stderr.contains("dropped") && !received.stderr.contains("dropped 0 packets"))
        #expect((inbound?["nackCount"] as? Int ?? 0) > 0, "\(received.stderr)")
        #expect((inbound?["packetsRepaired"] as? Int ?? 0) > 0, "\(received.stderr)")
        #expect((inbound?["retransmittedPacketsReceived"] as? Int ?? 0) > 0, "\(received.stderr)")
        #expect(inbound?["packetsLost"] as? Int == 0, "\(received.stderr)")
    }

    @Test(arguments: clips)
    func gstreamerToOurReceiver(_ clip: Clip) throws {
        let directory = try TemporaryDirectory()
        let (path, md5s) = try Self.clip(clip, in: directory)
        let port = try freeRTPPortPair()
        let output = directory.path("out.y4m")
        let receiver = try Self.startReceiver(port: port, output: output, in: directory, ["--codec", clip.codec])
        let sent = try runProcess(
            "gst-launch-1.0",
            [
                "-q", "filesrc", "location=\(path)", "!", "\(clip.gstElement)parse", "!",
                "rtp\(clip.gstElement)pay", "config-interval=-1", "pt=96", "!", "udpsink", "host=127.0.0.1",
                "port=\(port)", "sync=true",
            ])
        let received = receiver.wait(timeout: 20)
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(received.status == 0, "\(received.stderr)")
        #expect(try Self.y4mMD5s(output) == md5s, "\(received.stderr)")
    }

    /// A receiver that joins a paced stream late starts at the next keyframe:
    /// its frames are the clip's frames from that keyframe to the end.
    @Test func aLateJoinerStartsAtTheNextKeyframe() throws {
        let directory = try TemporaryDirectory()
        let (path, md5s) = try Self.clip(Self.clips[0], in: directory, frames: 60)
        let port = try freeRTPPortPair()
        let sender = try BackgroundProcess(
            Self.codecs, ["stream", "send", "-i", path, "rtp://127.0.0.1:\(port)"], in: directory)
        usleep(700_000)  // about 17 frames at 25 fps (the sender starts at once)
        let output = directory.path("late.y4m")
        let received = try runProcess(
            Self.codecs, ["stream", "receive", "rtp://@127.0.0.1:\(port)", "-o", output, "--timeout", "2"])
        #expect(sender.wait(timeout: 20).status == 0)
        #expect(received.status == 0, "\(received.stderr)")
        let got = try Self.y4mMD5s(output)
        let start = md5s.count - got.count
        #expect(start > 0 && start % 12 == 0, "joined at frame \(start)")  // a keyframe every 12
        #expect(got == Array(md5s.suffix(got.count)))
    }

    /// 2 % of the packets dropped on the way (seeded), NACK switched off at
    /// the receiver: every frame that comes out is one of the clip's frames,
    /// bit for bit, in order; the decoder's counts add up; each loss is
    /// recovered at a keyframe.
    @Test(arguments: clips)
    func seededLossWithoutNACKOutputsOnlyExactFrames(_ clip: Clip) throws {
        let directory = try TemporaryDirectory()
        let (path, md5s) = try Self.clip(clip, in: directory, frames: 96)
        let port = try freeRTPPortPair()
        let output = directory.path("lossy.y4m")
        let receiver = try Self.startReceiver(
            port: port, output: output, in: directory, ["--codec", clip.codec, "--no-nack"])
        let sent = try runProcess(
            Self.codecs,
            ["stream", "send", "-i", path, "rtp://127.0.0.1:\(port)", "--no-pace", "--loss", "2", "--seed", "7"])
        let received = receiver.wait(timeout: 20)
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stderr.contains("dropped") && !sent.stderr.contains("dropped 0 of"), "\(sent.stderr)")
        #expect(received.status == 0, "\(received.stderr)")
        let got = try Self.y4mMD5s(output)
        #expect(!got.isEmpty && got.count < md5s.count, "\(received.stderr)")
        // A subsequence of the clip, in order.
        var position = 0
        for md5 in got {
            guard let found = md5s[position...].firstIndex(of: md5) else {
                Issue.record("a frame that is not the clip's (or out of order)")
                break
            }
            position = found + 1
        }
        let counts = try #require(
            received.stderr.firstMatch(of: /submitted (\d+), decoded (\d+), dropped (\d+), pending (\d+)/))
        let (submitted, decoded, dropped, pending) = (Int(counts.1)!, Int(counts.2)!, Int(counts.3)!, Int(counts.4)!)
        #expect(submitted == decoded + dropped + pending)
        #expect(decoded == got.count)
    }

    /// Seeded loss of 1, 3 and 5 % on a file sent as it is (B-frames): the
    /// receiver asks for each lost packet again (generic NACK), the sender
    /// sends it from its history, and every frame comes out, equal to
    /// FFmpeg's decode of the file. The sender's and receiver's figures
    /// (`--stats-json`, webrtc-stats names) count the repairs.
    @Test(arguments: clips, [1, 3, 5])
    func nackRepairsEveryLostPacket(_ clip: Clip, percent: Int) throws {
        let directory = try TemporaryDirectory()
        let (path, md5s) = try Self.clip(clip, in: directory, frames: 96)
        let port = try freeRTPPortPair()
        let output = directory.path("repaired.y4m")
        let receiverStats = directory.path("in.json")
        let senderStats = directory.path("out.json")
        let receiver = try Self.startReceiver(
            port: port, output: output, in: directory,
            // 300 ms for the repairs: the machine running the tests may be busy.
            ["--codec", clip.codec, "--stats-json", receiverStats, "--jitter", "300"])
        let sent = try runProcess(
            Self.codecs,
            [
                "stream", "send", "-i", path, "rtp://127.0.0.1:\(port)", "--loss", "\(percent)", "--seed", "11",
                "--stats-json", senderStats,
            ])
        let received = receiver.wait(timeout: 30)
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(received.status == 0, "\(received.stderr)")
        #expect(try Self.y4mMD5s(output) == md5s, "\(sent.stderr)\n\(received.stderr)")
        let outbound = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: senderStats)))
                as? [String: [String: Any]])["outbound-rtp"]
        let inbound = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: receiverStats)))
                as? [String: [String: Any]])["inbound-rtp"]
        let nacks = (outbound?["nackCount"] as? Int) ?? 0
        let retransmitted = (outbound?["retransmittedPacketsSent"] as? Int) ?? 0
        #expect(nacks > 0 && retransmitted > 0, "\(sent.stderr)")
        #expect((inbound?["packetsRepaired"] as? Int ?? 0) > 0, "\(received.stderr)")
        #expect(inbound?["packetsLost"] as? Int == 0, "\(received.stderr)")
        #expect(inbound?["framesDecoded"] as? Int == md5s.count, "\(received.stderr)")
    }

    /// A third party that knows neither the SSRC nor the sequence numbers
    /// sends small datagrams from ports of its own to the receiver's RTP port
    /// during a live stream, then an RTCP BYE with a random SSRC to its RTCP
    /// port: the receiver keeps to the stream it locked on, every frame comes
    /// out equal to FFmpeg's, and the strangers' packets are counted as
    /// ignored (they used to make the jitter buffer refuse every later
    /// packet as late, and any BYE ended the session).
    @Test func strangersAndASpoofedBYEDoNotDisturbTheStream() throws {
        let directory = try TemporaryDirectory()
        let (path, md5s) = try Self.clip(Self.clips[0], in: directory, frames: 60)
        let port = try freeRTPPortPair()
        let output = directory.path("out.y4m")
        let stats = directory.path("in.json")
        let receiver = try Self.startReceiver(port: port, output: output, in: directory, ["--stats-json", stats])
        let sender = try BackgroundProcess(
            Self.codecs, ["stream", "send", "-i", path, "rtp://127.0.0.1:\(port)"], in: directory)
        usleep(800_000)  // about 20 frames in
        let hostile = try runProcess(
            "/usr/bin/python3",
            [
                "-c",
                """
                import os, socket, struct, sys
                port = int(sys.argv[1])
                for i in range(4):
                    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                    header = struct.pack('!BBHII', 0x80, 96, 40000 + i * 7, 123456, 0xDEAD0000 + i)
                    s.sendto(header + os.urandom(8), ('127.0.0.1', port))
                bye = struct.pack('!BBHI', 0x81, 203, 1, 0x0BADBEEF)
                socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(bye, ('127.0.0.1', port + 1))
                """,
                "\(port)",
            ])
        #expect(hostile.status == 0, "\(hostile.stderr)")
        let sent = sender.wait(timeout: 30)
        let received = receiver.wait(timeout: 30)
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(received.status == 0, "\(received.stderr)")
        #expect(try Self.y4mMD5s(output) == md5s, "\(received.stderr)")
        let inbound = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats)))
                as? [String: [String: Any]])["inbound-rtp"]
        #expect((inbound?["packetsIgnored"] as? Int ?? 0) >= 4, "\(received.stderr)")
    }

    /// Encoding from Y4M in real-time mode with no periodic keyframes, and
    /// packets lost on the receiving side: the receiver's picture loss
    /// indications make the sender force keyframes, decoding resumes at
    /// exactly those frames, and each loss costs at most the requests' rate
    /// limit (0.5 s, 15 frames) instead of the rest of the stream.
    @Test func pictureLossIndicationBringsAKeyframe() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("source.y4m")
        try ffmpegTestPattern(size: "320x240", frames: 90, arguments: ["-pix_fmt", "yuv420p"], to: source)
        let port = try freeRTPPortPair()
        let output = directory.path("pli.y4m")
        let receiver = try Self.startReceiver(
            port: port, output: output, in: directory, ["--loss", "1", "--seed", "5", "--no-nack"])
        let sent = try runProcess(
            Self.codecs, ["stream", "send", "-i", source, "rtp://127.0.0.1:\(port)", "--keyint", "1000", "--realtime"])
        let received = receiver.wait(timeout: 20)
        let log = "\(sent.stderr)\n\(received.stderr)"
        #expect(sent.status == 0, "\(log)")
        #expect(received.status == 0, "\(log)")
        let forced = try #require(sent.stderr.firstMatch(of: /keyframes forced at frames \[([0-9, ]+)\]/), "\(log)")
        let frames = Set(forced.1.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) })
        #expect(!frames.isEmpty)
        // 30 fps: pts 3000 per frame in 90 kHz.
        let resumed = received.stderr.matches(of: /resumed at pts (\d+)\/90000/).compactMap { Int($0.1) }
        #expect(!resumed.isEmpty, "\(log)")
        for pts in resumed { #expect(frames.contains(pts / 3000), "resumed at frame \(pts / 3000): \(log)") }
        let written = try Self.y4mMD5s(output).count
        #expect(written >= 90 - 17 * frames.count, "\(written) frames written\n\(log)")
    }

    /// Receiver reports showing 20 % loss drive the sender's bit rate down
    /// (`--adaptive-bitrate`: x264 retargeted from the reports' fraction lost).
    @Test func receiverReportsLowerTheBitRate() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("source.y4m")
        try ffmpegTestPattern(size: "320x240", frames: 75, arguments: ["-pix_fmt", "yuv420p"], to: source)
        let port = try freeRTPPortPair()
        let receiver = try Self.startReceiver(
            port: port, output: directory.path("out.h264"), in: directory, ["--loss", "20", "--seed", "3", "--no-nack"])
        let sent = try runProcess(
            Self.codecs,
            [
                "stream", "send", "-i", source, "rtp://127.0.0.1:\(port)", "--bitrate", "800k", "--adaptive-bitrate",
                "--realtime",
            ])
        _ = receiver.wait(timeout: 20)
        #expect(sent.status == 0, "\(sent.stderr)")
        let match = try #require(
            sent.stderr.firstMatch(
                of: /bit rate changed (\d+) times from receiver reports \((\d+)…(\d+) bit\/s; last ([0-9, ]+)\)/),
            "\(sent.stderr)")
        let rates = match.4.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let (changes, lowest, highest) = (Int(match.1) ?? 0, Int(match.2) ?? 0, Int(match.3) ?? 0)
        #expect(changes >= 1 && rates.count == min(changes, 5), "\(sent.stderr)")
        #expect(highest < 800_000 && lowest <= highest, "\(sent.stderr)")
        #expect(rates == rates.sorted(by: >), "\(rates)")
    }
}
