import Foundation
import TestSupport
import Testing

/// `codecs stream send` of a movie with audio: FFmpeg listens (or reads the
/// HLS playlist) and prints the MD5 of every audio packet it receives
/// (`-map 0:a -c copy -f framemd5`), which must be the source's packets.
@Suite struct AudioTransportTests {
    /// The payload MD5 column of FFmpeg's `framemd5` of audio packets (the
    /// sixth field: side data, such as the samples to skip, follows it).
    static func packetHashes(_ output: Data) -> [String] {
        String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return fields.count >= 6 && fields[5].count == 32 ? fields[5] : nil
        }
    }

    /// The ffmpeg arguments that print the audio packets' MD5s; MPEG-TS
    /// carries AAC with ADTS headers, which `aac_adtstoasc` takes off.
    static func audioMD5Output(stripADTS: Bool) -> [String] {
        ["-map", "0:a:0", "-c", "copy"] + (stripADTS ? ["-bsf:a", "aac_adtstoasc"] : []) + ["-f", "framemd5", "-"]
    }

    /// SRT, MPEG-TS over UDP, RTMP and RTSP carry the AAC track of an MP4:
    /// FFmpeg receives every audio packet the file holds, byte for byte, in
    /// order. Over RTSP FFmpeg's RTP receiver may miss the last packet at the
    /// teardown (it misses more when FFmpeg itself is the sender).
    @Test(arguments: ["srt", "udp", "rtmp", "rtsp"])
    func audioTravelsWithTheVideo(_ transport: String) throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mp4")
        try MultiTrackMedia.make(input, audio: [MultiTrackMedia.Audio("aac")])
        let expected = Self.packetHashes(
            try runChecked(
                "ffmpeg", ["-nostdin", "-v", "error", "-i", input] + Self.audioMD5Output(stripADTS: false)))
        #expect(expected.count == 95)

        let port: Int
        let kind: SocketKind
        let url: String
        var listenerArguments = ["-nostdin", "-v", "error"]
        switch transport {
        case "srt":
            port = try freePort(.udp)
            kind = .udp
            listenerArguments += ["-i", "srt://127.0.0.1:\(port)?mode=listener"]
            url = "srt://127.0.0.1:\(port)"
        case "udp":
            port = try freePort(.udp)
            kind = .udp
            listenerArguments += ["-i", "udp://127.0.0.1:\(port)?timeout=2000000"]
            url = "udp://127.0.0.1:\(port)"
        case "rtsp":
            port = try freePort(.tcp)
            kind = .tcp
            listenerArguments += ["-rtsp_flags", "listen", "-i", "rtsp://127.0.0.1:\(port)/live"]
            url = "rtsp://127.0.0.1:\(port)/live"
        default:
            port = try freePort(.tcp)
            kind = .tcp
            listenerArguments += ["-listen", "1", "-i", "rtmp://127.0.0.1:\(port)/live/s"]
            url = "rtmp://127.0.0.1:\(port)/live/s"
        }
        let carriesTS = transport == "srt" || transport == "udp"
        let listener = try Peer("ffmpeg", listenerArguments + Self.audioMD5Output(stripADTS: carriesTS))
        defer { listener.stop() }
        try waitUntilBound(kind, port: port, by: listener)
        let sender = try runCodecs(["stream", "send", "-i", input, url])
        #expect(sender.status == 0, "\(sender.stderr)")
        #expect(
            sender.stderr.contains("sent 60 access units to \(url) and 95 packets of 1 other track"), "\(sender.stderr)"
        )
        let received = Self.packetHashes(listener.wait().stdout)
        if transport == "rtsp" {
            #expect(received.count >= expected.count - 1, "\(received.count) of \(expected.count)")
            #expect(received == Array(expected.prefix(received.count)))
        } else {
            #expect(received == expected, "\(transport): \(received.count) of \(expected.count) packets")
        }
    }

    /// A publish/receive round trip keeps the audio: ours sends an MP4 over
    /// SRT to ours receiving into MKV (every track as the stream has it), and
    /// FFmpeg publishes over RTMP to ours receiving into MP4. Every audio
    /// packet arrives byte for byte, the video decodes to the source's frames
    /// and every stream stays within one frame (video) or one audio frame of
    /// the source once the shift all streams share is taken out (MPEG-TS and
    /// FLV start the stream later than the file; at most 1.5 s).
    @Test(arguments: ["srt", "rtmp"])
    func receivedFileKeepsTheAudio(_ transport: String) throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mp4")
        try MultiTrackMedia.make(input, audio: [MultiTrackMedia.Audio("aac")])
        let expected = Self.packetHashes(
            try runChecked(
                "ffmpeg", ["-nostdin", "-v", "error", "-i", input] + Self.audioMD5Output(stripADTS: false)))
        let output = directory.path(transport == "srt" ? "received.mkv" : "received.mp4")
        let port = try freePort(transport == "srt" ? .udp : .tcp)
        let url = transport == "srt" ? "srt://127.0.0.1:\(port)" : "rtmp://127.0.0.1:\(port)/live/s"
        let receiver = try Peer(
            TestPaths.codecsExecutable.path,
            ["stream", "receive", transport == "srt" ? url + "?mode=listener" : url, "-o", output]
                + (transport == "srt" ? [] : ["--listen"]))
        defer { receiver.stop() }
        try waitUntilBound(transport == "srt" ? .udp : .tcp, port: port, by: receiver)
        if transport == "srt" {
            let sender = try runCodecs(["stream", "send", "-i", input, url])
            #expect(sender.status == 0, "\(sender.stderr)")
        } else {
            try runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", input, "-c", "copy", "-f", "flv", url])
        }
        let received = receiver.wait()
        #expect(received.status == 0, "\(received.stderr)")
        #expect(
            received.stderr.contains("received 60 access units from")
                && received.stderr.contains("and 95 packets of 1 other track"),
            "\(received.stderr)")
        let hashes = Self.packetHashes(
            try runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", output] + Self.audioMD5Output(stripADTS: false)))
        #expect(hashes == expected, "\(hashes.count) of \(expected.count) packets")
        #expect(try ffmpegFrameMD5(path: output) == (try ffmpegFrameMD5(path: input)))
        #expect(try MultiTrackMedia.syncErrors(output, source: input, maximumShift: 1.5) == [])
    }

    /// Received into Y4M, the video is decoded and written alone, and
    /// `receive` says which tracks it did not keep.
    @Test func receivingIntoY4MSaysItKeepsTheVideoOnly() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mp4")
        try MultiTrackMedia.make(input, audio: [MultiTrackMedia.Audio("aac")])
        let port = try freePort(.tcp)
        let url = "rtmp://127.0.0.1:\(port)/live/s"
        let receiver = try Peer(
            TestPaths.codecsExecutable.path, ["stream", "receive", url, "--listen", "-o", directory.path("out.y4m")])
        defer { receiver.stop() }
        try waitUntilBound(.tcp, port: port, by: receiver)
        try runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", input, "-c", "copy", "-f", "flv", url])
        let received = receiver.wait()
        #expect(received.status == 0, "\(received.stderr)")
        let lines = received.stderr.split(separator: "\n").filter { $0.contains("writes the video track only") }
        #expect(lines.count == 1, "\(received.stderr)")
        #expect(lines.first?.contains("not kept: track 1: audio aac") == true, "\(received.stderr)")
    }

    /// HLS: the fMP4 segments hold the audio track; FFmpeg reads every
    /// packet back from the playlist.
    @Test func hlsPlaylistCarriesTheAudio() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mkv")
        try MultiTrackMedia.make(input, audio: [MultiTrackMedia.Audio("libopus")], subtitleCodec: "srt")
        let playlist = directory.path("live.m3u8")
        let sender = try runCodecs(["stream", "send", "-i", input, playlist, "--no-pace"])
        #expect(sender.status == 0, "\(sender.stderr)")
        #expect(
            sender.stderr.contains("track 2: subtitle subrip is not sent: HLS carries the video and audio tracks only"),
            "\(sender.stderr)")
        #expect(
            try MultiTrackMedia.packetMD5(playlist, stream: "a:0")
                == (try MultiTrackMedia.packetMD5(input, stream: "a:0")))
    }

    /// The browser page (`serve --http`) gets the video only, and serve says so.
    @Test func webServeSaysItSendsVideoOnly() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mkv")
        try MultiTrackMedia.make(input, audio: [MultiTrackMedia.Audio("libopus")])
        let port = try freePort(.tcp)
        let server = try Peer(
            TestPaths.codecsExecutable.path, ["stream", "serve", "-i", input, "--http", "127.0.0.1:\(port)"])
        defer { server.stop() }
        #expect(
            server.waitForError(
                containing: "the page gets the video track only; not sent from \(input): track 1: audio opus"),
            "\(server.standardError)")
    }

    /// RTP sends the video only, and says so.
    @Test func rtpSaysItSendsVideoOnly() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mp4")
        try MultiTrackMedia.make(input, audio: [MultiTrackMedia.Audio("aac")])
        let port = try freePort(.udp)
        let sender = try runCodecs(
            ["stream", "send", "-i", input, "rtp://127.0.0.1:\(port)", "--no-pace", "--sdp", directory.path("s.sdp")])
        #expect(sender.status == 0, "\(sender.stderr)")
        #expect(
            sender.stderr.contains("RTP carries the video track only here; not sent from \(input): track 1: audio aac"),
            "\(sender.stderr)")
    }
}
