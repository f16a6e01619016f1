import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

/// One direction of one transport: the URL our side uses, the FFmpeg peer's
/// arguments, and which socket the listening side binds.
struct TransportCase: CustomStringConvertible, Sendable {
    var name: String
    var codec: String
    /// Our sender reads the Y4M clip (encoding it) instead of the encoded file.
    var encodesOnTheWay = false
    /// Our receiver's output extension (`y4m` decodes; others keep the access units).
    var output = "y4m"

    var description: String { "\(name) \(codec)\(encodesOnTheWay ? " from y4m" : "") → .\(output)" }
    var isHEVC: Bool { codec == "hevc" }
}

/// The clip, its encoding by `codecs encode` (the file sent), and FFmpeg's
/// per-frame MD5s of that file (what every receiver must reproduce).
struct Sent {
    let directory: TemporaryDirectory
    let clip: String
    let encoded: String
    let hashes: [String]

    init(codec: String, frames: Int = 30, keyint: Int = 30, extension: String = "mp4") throws {
        directory = try TemporaryDirectory()
        clip = directory.path("clip.y4m")
        try writeTestClip(to: clip, frames: frames)
        encoded = directory.path("sent.\(`extension`)")
        // The same encoder settings as `stream send` uses for Y4M input
        // (the live defaults: real-time, Constrained Baseline for H.264; a
        // clip of at most `keyint` frames has one keyframe either way), so
        // both give the same stream.
        let encoding = try runCodecs(
            ["encode", "-i", clip, "-o", encoded, "--codec", codec, "--keyint", "\(keyint)", "--realtime"]
                + (codec == "h264" ? ["--profile", "baseline"] : []))
        guard encoding.status == 0 else { throw ProcessError("encode failed: \(encoding.stderr)") }
        hashes = try referenceHashes(encoded)
    }
}

/// `codecs stream send` and `codecs stream receive` with FFmpeg (and once
/// srt-live-transmit) as the peer, on loopback: every frame the peer decodes
/// is the frame FFmpeg decodes from the file sent, MD5 for MD5.
@Suite struct TransportTests {
    static let sendCases: [TransportCase] = [
        TransportCase(name: "srt", codec: "h264", encodesOnTheWay: true),
        TransportCase(name: "srt", codec: "hevc"),
        TransportCase(name: "udp", codec: "h264"),
        TransportCase(name: "udp", codec: "hevc", encodesOnTheWay: true),
        TransportCase(name: "rtsp-tcp", codec: "h264", encodesOnTheWay: true),
        TransportCase(name: "rtsp-udp", codec: "hevc"),
        TransportCase(name: "rtmp", codec: "h264"),
    ]

    /// Ours publishes; FFmpeg listens and prints the MD5 of every frame.
    @Test(arguments: sendCases)
    func sendToFFmpeg(_ test: TransportCase) throws {
        let sent = try Sent(codec: test.codec)
        let port: Int
        let url: String
        var listenerArguments = ["-nostdin", "-v", "error"]
        var ourOptions: [String] = []
        let kind: SocketKind
        switch test.name {
        case "srt":
            port = try freePort(.udp)
            kind = .udp
            listenerArguments += ["-i", "srt://127.0.0.1:\(port)?mode=listener"]
            url = "srt://127.0.0.1:\(port)"
        case "udp":
            port = try freePort(.udp)
            kind = .udp
            // UDP has no end of stream: two seconds of silence end ffmpeg's read.
            listenerArguments += ["-i", "udp://127.0.0.1:\(port)?timeout=2000000"]
            url = "udp://127.0.0.1:\(port)"
        case "rtsp-tcp", "rtsp-udp":
            port = try freePort(.tcp)
            kind = .tcp
            let lower = test.name == "rtsp-tcp" ? "tcp" : "udp"
            listenerArguments += [
                "-rtsp_flags", "listen", "-rtsp_transport", lower, "-i", "rtsp://127.0.0.1:\(port)/live",
            ]
            url = "rtsp://127.0.0.1:\(port)/live"
            ourOptions = ["--rtsp-transport", lower]
        default:
            port = try freePort(.tcp)
            kind = .tcp
            listenerArguments += ["-listen", "1", "-i", "rtmp://127.0.0.1:\(port)/live/s"]
            url = "rtmp://127.0.0.1:\(port)/live/s"
        }
        let listener = try Peer("ffmpeg", listenerArguments + ffmpegFrameMD5Output)
        defer { listener.stop() }
        try waitUntilBound(kind, port: port, by: listener)
        let input = test.encodesOnTheWay ? [sent.clip, "--codec", test.codec] : [sent.encoded]
        let sender = try runCodecs(["stream", "send", "-i"] + input + [url] + ourOptions)
        #expect(sender.status == 0, "\(sender.stderr)")
        #expect(sender.stderr.contains("sent 30 access units to \(url)"), "\(sender.stderr)")
        let received = listener.wait()
        let hashes = frameHashes(received.stdout)
        #expect(
            hashes == sent.hashes,
            "\(test): ffmpeg decoded \(hashes.count) of \(sent.hashes.count) frames\n\(received.stderr)")
    }

    /// Ours publishes as an SRT listener (`--listen`); FFmpeg calls in.
    @Test func sendAsAnSRTListener() throws {
        let sent = try Sent(codec: "h264")
        let port = try freePort(.udp)
        let sender = try Peer(
            TestPaths.codecsExecutable.path,
            ["stream", "send", "-i", sent.encoded, "srt://127.0.0.1:\(port)", "--listen"])
        defer { sender.stop() }
        try waitUntilBound(.udp, port: port, by: sender)
        let caller = try Peer(
            "ffmpeg", ["-nostdin", "-v", "error", "-i", "srt://127.0.0.1:\(port)"] + ffmpegFrameMD5Output)
        defer { caller.stop() }
        let sending = sender.wait()
        #expect(sending.status == 0, "\(sending.stderr)")
        #expect(frameHashes(caller.wait().stdout) == sent.hashes)
    }

    /// The server goes away mid-stream: the sender reconnects (after the
    /// back-off it prints) and the new connection starts at a keyframe that
    /// FFmpeg decodes, like everything after it.
    @Test func theSenderReconnectsMidStream() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.y4m")
        try writeTestClip(to: clip, frames: 120)
        let port = try freePort(.tcp)
        let url = "rtmp://127.0.0.1:\(port)/live/s"
        // The first server is killed a second into the four-second clip.
        let first = try Peer("ffmpeg", ["-nostdin", "-v", "error", "-listen", "1", "-i", url, "-f", "null", "-"])
        defer { first.stop() }
        try waitUntilBound(.tcp, port: port, by: first)
        let sender = try Peer(
            TestPaths.codecsExecutable.path, ["stream", "send", "-i", clip, url, "--realtime", "--reconnect", "3"])
        defer { sender.stop() }
        // Its first line comes before it connects; then it sends for a while.
        #expect(sender.waitForError(containing: "to \(url)\n"), "\(sender.standardError)")
        usleep(1_000_000)
        #expect(first.process.isRunning, "the first server ended by itself: \(first.standardError)")
        first.stop()
        first.waitForExit()
        let recording = directory.path("second.ts")
        let second = try Peer(
            "ffmpeg", ["-nostdin", "-v", "error", "-listen", "1", "-i", url, "-c", "copy", recording])
        defer { second.stop() }
        let sending = sender.wait()
        _ = second.wait()
        #expect(sending.status == 0, "\(sending.stderr)")
        // The broken connection is named, with the sample it broke on.
        #expect(sending.stderr.contains("codecs stream send: \(url): sending sample "), "\(sending.stderr)")
        #expect(sending.stderr.contains("reconnecting in 0.5 s (attempt 1 of 3)"), "\(sending.stderr)")
        #expect(sending.stderr.contains("reconnected"), "\(sending.stderr)")
        let flags = String(
            decoding: try runChecked(
                "ffprobe", ["-v", "error", "-show_entries", "packet=flags", "-of", "csv=p=0", recording]),
            as: UTF8.self
        ).split(separator: "\n")
        #expect(flags.first?.hasPrefix("K") == true, "\(flags.prefix(3))")
        #expect(!flags.isEmpty, "\(sending.stderr)")
        // Every packet the second server got decodes (no reference is missing).
        #expect(try ffmpegFrameMD5(path: recording, everyFrame: true).count == flags.count)
    }

    static let receiveCases: [TransportCase] = [
        TransportCase(name: "srt", codec: "h264"),
        TransportCase(name: "srt", codec: "hevc", output: "hevc"),
        TransportCase(name: "udp", codec: "h264", output: "ts"),
        TransportCase(name: "rtsp-tcp", codec: "h264"),
        TransportCase(name: "rtsp-udp", codec: "hevc"),
        TransportCase(name: "rtmp", codec: "h264", output: "mp4"),
    ]

    /// FFmpeg publishes the file; ours receives, decoding to Y4M or keeping
    /// the access units in a file.
    @Test(arguments: receiveCases)
    func receiveFromFFmpeg(_ test: TransportCase) throws {
        let sent = try Sent(codec: test.codec)
        let output = sent.directory.path("received.\(test.output)")
        var senderArguments = ["-nostdin", "-v", "error", "-re", "-i", sent.encoded, "-c", "copy"]
        let ourArguments: [String]
        let port: Int
        let kind: SocketKind
        switch test.name {
        case "srt":
            port = try freePort(.udp)
            kind = .udp
            // FFmpeg's sender closes without waiting for the receiver's
            // latency window (TSBPD), so the last packets in flight are lost
            // whatever the receiver does: it sends the file twice, and ours
            // stops after the first 30 frames. Both ends ask for 20 ms.
            ourArguments = ["srt://127.0.0.1:\(port)?mode=listener&latency=20000", "--frames", "30"]
            senderArguments.insert(contentsOf: ["-stream_loop", "1"], at: senderArguments.firstIndex(of: "-i")!)
            senderArguments += ["-f", "mpegts", "srt://127.0.0.1:\(port)?latency=20000"]
        case "udp":
            port = try freePort(.udp)
            kind = .udp
            ourArguments = ["udp://127.0.0.1:\(port)", "--timeout", "1"]
            senderArguments += ["-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316"]
        case "rtsp-tcp", "rtsp-udp":
            port = try freePort(.tcp)
            kind = .tcp
            let lower = test.name == "rtsp-tcp" ? "tcp" : "udp"
            ourArguments = ["rtsp://127.0.0.1:\(port)/live", "--listen", "--rtsp-transport", lower]
            senderArguments += ["-rtsp_transport", lower, "-f", "rtsp", "rtsp://127.0.0.1:\(port)/live"]
        default:
            port = try freePort(.tcp)
            kind = .tcp
            ourArguments = ["rtmp://127.0.0.1:\(port)/live/s", "--listen"]
            senderArguments += ["-f", "flv", "rtmp://127.0.0.1:\(port)/live/s"]
        }
        let receiver = try Peer(
            TestPaths.codecsExecutable.path, ["stream", "receive"] + ourArguments + ["-o", output])
        defer { receiver.stop() }
        try waitUntilBound(kind, port: port, by: receiver)
        let sender = try Peer("ffmpeg", senderArguments)
        defer { sender.stop() }
        let received = receiver.wait()
        let sending = sender.wait()
        #expect(received.status == 0, "\(received.stderr)")
        if test.name != "srt" {
            // (The SRT sender is cut off by our receiver's --frames.)
            #expect(sending.status == 0, "\(sending.stderr)")
            #expect(received.stderr.contains("received 30 access units"), "\(received.stderr)")
        }
        let hashes = try referenceHashes(output)
        #expect(hashes == sent.hashes, "\(test): \(hashes.count) of \(sent.hashes.count) frames\n\(received.stderr)")
    }

    /// HLS: a playlist of fMP4 segments with a one-second target duration
    /// that ffprobe and ffmpeg read back whole, and that our receiver plays.
    @Test(arguments: ["h264", "hevc"])
    func hlsPlaylist(codec: String) throws {
        let sent = try Sent(codec: codec)
        let playlist = sent.directory.path("live.m3u8")
        let sending = try runCodecs(["stream", "send", "-i", sent.clip, playlist, "--codec", codec, "--no-pace"])
        #expect(sending.status == 0, "\(sending.stderr)")
        let text = try String(contentsOfFile: playlist, encoding: .utf8)
        #expect(text.contains("#EXT-X-TARGETDURATION:1\n"), "\(text)")
        #expect(text.contains("#EXT-X-MAP:URI=\"init.mp4\""), "\(text)")
        #expect(text.contains(".m4s\n"), "\(text)")
        #expect(text.contains("#EXT-X-ENDLIST"), "\(text)")
        let streams = try ffprobeStreams(path: playlist, countFrames: true)
        let video = try #require(streams.first { $0.codecType == "video" })
        #expect(video.codecName == codec)
        #expect(video.width == 176 && video.height == 144)
        #expect(video.frameCount == 30)
        if codec == "hevc" {
            let tags = try ffprobeStreamDictionaries(path: playlist).compactMap { $0["codec_tag_string"] as? String }
            #expect(tags == ["hvc1"])
        }
        #expect(try referenceHashes(playlist) == sent.hashes)
        let output = sent.directory.path("played.y4m")
        let playing = try runCodecs(["stream", "receive", playlist, "-o", output])
        #expect(playing.status == 0, "\(playing.stderr)")
        #expect(try referenceHashes(output) == sent.hashes)
    }

    /// srt-live-transmit relays our SRT publish to MPEG-TS over UDP, which
    /// our receiver decodes.
    @Test func relayThroughSRTLiveTransmit() throws {
        let sent = try Sent(codec: "h264")
        let srtPort = try freePort(.udp)
        let udpPort = try freePort(.udp)
        let output = sent.directory.path("relayed.y4m")
        let receiver = try Peer(
            TestPaths.codecsExecutable.path,
            ["stream", "receive", "udp://127.0.0.1:\(udpPort)", "--timeout", "1.5", "-o", output])
        defer { receiver.stop() }
        try waitUntilBound(.udp, port: udpPort, by: receiver)
        let relay = try Peer(
            "srt-live-transmit", ["-q", "srt://127.0.0.1:\(srtPort)?mode=listener", "udp://127.0.0.1:\(udpPort)"])
        defer { relay.stop() }
        try waitUntilBound(.udp, port: srtPort, by: relay)
        let sending = try runCodecs(["stream", "send", "-i", sent.clip, "srt://127.0.0.1:\(srtPort)"])
        #expect(sending.status == 0, "\(sending.stderr)")
        let received = receiver.wait()
        #expect(received.status == 0, "\(received.stderr)")
        #expect(try referenceHashes(output) == sent.hashes, "\(received.stderr)")
    }

    /// A receiver that joins a running MPEG-TS/UDP stream starts at a
    /// keyframe: what it writes is the sent stream from a keyframe on.
    @Test func lateJoinerStartsAtAKeyframe() throws {
        let sent = try Sent(codec: "h264", frames: 90, keyint: 15)
        let port = try freePort(.udp)
        let output = sent.directory.path("joined.y4m")
        let sender = try Peer(
            TestPaths.codecsExecutable.path,
            ["stream", "send", "-i", sent.clip, "udp://127.0.0.1:\(port)", "--keyint", "15"])
        defer { sender.stop() }
        // The sender has been sending into the void for a while.
        usleep(1_000_000)
        let received = try runCodecs(["stream", "receive", "udp://127.0.0.1:\(port)", "--timeout", "1", "-o", output])
        #expect(sender.wait().status == 0)
        #expect(received.status == 0, "\(received.stderr)")
        let hashes = try referenceHashes(output)
        let start = sent.hashes.count - hashes.count
        #expect(start >= 15 && start % 15 == 0, "joined at frame \(start)\n\(received.stderr)")
        #expect(hashes == Array(sent.hashes.suffix(hashes.count)), "\(received.stderr)")
    }

    /// An encoded file that starts mid-GOP is sent from its first keyframe,
    /// and the sender says how many access units it skipped.
    @Test func aFileStartingMidGOPIsSentFromItsFirstKeyframe() throws {
        let sent = try Sent(codec: "h264", keyint: 15, extension: "h264")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: sent.encoded)))
        let all = samples(assemble([bytes[...]], codec: .h264))
        // The parameter sets, then access units 5… (the next keyframe is access unit 15).
        var stream: [UInt8] = []
        for set in all[0].formatDescription.parameterSets { stream += [0, 0, 0, 1] + set }
        stream += try annexBStream(all[5...])
        let midGOP = try writeAnnexBFile(stream, codec: .h264, in: sent.directory, name: "mid")
        let flags = try runChecked(
            "ffprobe", ["-v", "error", "-show_entries", "packet=flags", "-of", "csv=p=0", midGOP])
        let firstKey = try #require(
            String(decoding: flags, as: UTF8.self).split(separator: "\n").firstIndex { $0.hasPrefix("K") })
        #expect(firstKey == 10)

        let port = try freePort(.udp)
        let listener = try Peer(
            "ffmpeg", ["-nostdin", "-v", "error", "-i", "srt://127.0.0.1:\(port)?mode=listener"] + ffmpegFrameMD5Output)
        defer { listener.stop() }
        try waitUntilBound(.udp, port: port, by: listener)
        let sending = try runCodecs(["stream", "send", "-i", midGOP, "srt://127.0.0.1:\(port)"])
        #expect(sending.status == 0, "\(sending.stderr)")
        #expect(sending.stderr.contains("skipped \(firstKey) access units to the first keyframe"), "\(sending.stderr)")
        #expect(frameHashes(listener.wait().stdout) == Array(sent.hashes[15...]))
    }
}

/// Refused connections, silence, unknown schemes and HEVC over RTMP are
/// clear errors that name the URL.
@Suite struct TransportErrorTests {
    @Test func aRefusedConnectionIsRetriedThenReported() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.y4m")
        try writeTestClip(to: clip, frames: 5)
        // Bound a moment ago and released: nothing listens there.
        let url = "rtmp://127.0.0.1:\(try freePort(.tcp))/live/s"
        let result = try runCodecs(["stream", "send", "-i", clip, url, "--reconnect", "2"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("reconnecting in 0.5 s (attempt 1 of 2)"), "\(result.stderr)")
        #expect(result.stderr.contains("reconnecting in 1.0 s (attempt 2 of 2)"), "\(result.stderr)")
        let last = result.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.hasPrefix("codecs stream send: \(url): connecting failed: Connection refused"), "\(result.stderr)")
    }

    @Test func theReceiverRetriesARefusedConnection() throws {
        let url = "rtmp://127.0.0.1:\(try freePort(.tcp))/live/s"
        let result = try runCodecs(["stream", "receive", url, "-o", "unused.y4m", "--reconnect", "1"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("reconnecting in 0.5 s (attempt 1 of 1)"), "\(result.stderr)")
        let last = result.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(
            last.hasPrefix("codecs stream receive: \(url): opening the stream failed: Connection refused"),
            "\(result.stderr)")
    }

    @Test func aSilentPeerTimesOut() throws {
        let port = try freePort(.udp)
        let url = "srt://127.0.0.1:\(port)?mode=listener"
        let result = try runCodecs(["stream", "receive", url, "-o", "unused.y4m", "--timeout", "0.5"])
        #expect(result.status == 1)
        #expect(
            result.stderr == "codecs stream receive: \(url): nothing happened for 0.5 s while opening the stream\n",
            "\(result.stderr)")
    }

    @Test(arguments: ["send", "receive"])
    func anUnknownSchemeListsTheSupportedOnes(mode: String) throws {
        let arguments =
            mode == "send"
            ? ["stream", "send", "-i", "clip.y4m", "xyz://127.0.0.1:9"]
            : ["stream", "receive", "xyz://127.0.0.1:9", "-o", "out.y4m"]
        let result = try runCodecs(arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains("xyz://127.0.0.1:9: unsupported URL; supported: "), "\(result.stderr)")
        for form in [
            "srt://HOST:PORT", "udp://HOST:PORT", "rtsp://HOST:PORT/PATH", "rtmp://HOST[:PORT]/APP/KEY", ".m3u8",
        ] {
            #expect(result.stderr.contains(form), "\(form) missing: \(result.stderr)")
        }
    }

    @Test func hevcOverRTMPIsRefused() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.y4m")
        try writeTestClip(to: clip, frames: 5)
        let result = try runCodecs(["stream", "send", "-i", clip, "rtmp://127.0.0.1:1/live/s", "--codec", "hevc"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("RTMP carries H.264 only here, not HEVC"), "\(result.stderr)")
    }
}
