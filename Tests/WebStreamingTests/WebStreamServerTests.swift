import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing
import WebStreaming

/// The server against an independent client (Python `websockets` and raw
/// sockets): HTTP, the RFC 6455 handshake and frames, and the stream's bytes
/// against what `codecs convert` and FFmpeg make of the same input.
@Suite(.serialized)
struct WebStreamServerTests {
    /// An x264/x265 stream of `frames` frames, GOP `gop`, with B-frames.
    static func makeStream(
        codec: CodecType, frames: Int, gop: Int, size: String = "176x144", bitrate: String? = nil,
        in directory: TemporaryDirectory
    ) throws -> (path: String, samples: [CompressedSample]) {
        let path = directory.path(codec == .h264 ? "stream.h264" : "stream.hevc")
        let encoder =
            codec == .h264
            ? ["-c:v", "libx264", "-g", "\(gop)", "-bf", "2"]
            : ["-c:v", "libx265", "-x265-params", "log-level=error:keyint=\(gop):min-keyint=\(gop):bframes=2"]
        try ffmpegTestPattern(
            size: size, rate: 25, frames: frames, arguments: encoder + (bitrate.map { ["-b:v", $0] } ?? []), to: path)
        let stream = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        return (path, samples(assemble(stream, codec: codec)))
    }

    /// `codecs convert IN OUT.mp4`, then FFmpeg's MD5 of each MP4 packet
    /// (length-prefixed samples), in decode order.
    static func convertedPacketMD5s(_ path: String, in directory: TemporaryDirectory) throws -> [String] {
        let mp4 = directory.path("converted.mp4")
        try runChecked(TestPaths.codecsExecutable.path, ["convert", "-i", path, "-o", mp4])
        return try ffmpegFrameMD5(path: mp4, outputArgs: ["-c", "copy"])
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func descriptionModeEqualsConvertedMP4(codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        let (path, samples) = try Self.makeStream(codec: codec, frames: 40, gop: 12, in: directory)
        let harness = try ServerHarness(samples: samples, clients: 1)
        let received = try runPythonReceiver(port: harness.port)
        let statistics = try #require(harness.finish())

        let config = try #require(received["config"] as? [String: Any])
        let description = try #require(samples.first?.formatDescription)
        #expect(config["codec"] as? String == description.codecString)
        #expect(config["format"] as? String == (codec == .h264 ? "avc" : "hevc"))
        #expect(config["description"] as? String == Data(description.record).base64EncodedString())
        #expect(config["width"] as? Int == 176)
        #expect(config["height"] as? Int == 144)

        let units = try #require(received["units"] as? [[String: Any]])
        let expected = try Self.convertedPacketMD5s(path, in: directory)
        #expect(units.count == 40)
        #expect(units.map { $0["md5"] as? String ?? "" } == expected)
        #expect(units.map { $0["seq"] as? Int ?? -1 } == Array(0..<40))
        #expect(units.map { $0["key"] as? Int == 1 } == samples.map(\.isKeyframe))
        #expect(units.allSatisfy { $0["version"] as? Int == 1 })
        #expect(received["closeCode"] as? Int == 1001)
        #expect(statistics.accessUnits == 40)
        #expect(statistics.keyframes == samples.filter(\.isKeyframe).count)
        #expect(statistics.skips == 0)
        #expect(statistics.codecString == description.codecString)
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func annexBModeEqualsConvertedElementaryStream(codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        let (path, samples) = try Self.makeStream(codec: codec, frames: 30, gop: 10, in: directory)
        var configuration = WebStreamServer.Configuration()
        configuration.chunkFormat = .annexB
        let harness = try ServerHarness(configuration: configuration, samples: samples, clients: 1)
        let receivedPath = directory.path("received.bin")
        let received = try runPythonReceiver(port: harness.port, annexBPath: receivedPath)
        harness.finish()
        let config = try #require(received["config"] as? [String: Any])
        #expect(config["format"] as? String == "annexb")
        #expect(config["description"] is NSNull)
        let description = try #require(samples.first?.formatDescription)
        #expect(config["codec"] as? String == description.codecString(parameterSetsInBand: true))
        let converted = directory.path(codec == .h264 ? "converted.h264" : "converted.hevc")
        try runChecked(TestPaths.codecsExecutable.path, ["convert", "-i", path, "-o", converted])
        let ours = try Data(contentsOf: URL(fileURLWithPath: receivedPath))
        let theirs = try Data(contentsOf: URL(fileURLWithPath: converted))
        #expect(ours.count == theirs.count)
        #expect(ours == theirs)
        // And FFmpeg decodes what came over the socket to the same pictures.
        #expect(
            try ffmpegFrameMD5(path: receivedPath, extraInputArgs: ["-f", codec == .h264 ? "h264" : "hevc"])
                == ffmpegFrameMD5(path: path))
    }

    /// A client that reads one message every 50 ms beside one that reads at
    /// once: the slow one skips to keyframes (counted by the server and seen
    /// as sequence gaps), the fast one gets every access unit.
    @Test func slowClientSkipsFastClientGetsEverything() async throws {
        let directory = try TemporaryDirectory()
        let (path, samples) = try Self.makeStream(
            codec: .h264, frames: 150, gop: 10, size: "640x360", bitrate: "8M", in: directory)
        var configuration = WebStreamServer.Configuration()
        configuration.socketSendBuffer = 16384
        let harness = try ServerHarness(
            configuration: configuration, samples: samples, clients: 2, framePeriod: 0.01)
        let port = harness.port
        async let fast = Task.detached { try runPythonReceiverOutput(port: port) }.value
        async let slow = Task.detached { try runPythonReceiverOutput(port: port, delay: 0.05) }.value
        let (fastOutput, slowOutput) = try await (fast, slow)
        let fastResult = try parseReceiverOutput(fastOutput)
        let slowResult = try parseReceiverOutput(slowOutput)
        let statistics = try #require(harness.finish())

        let expected = try Self.convertedPacketMD5s(path, in: directory)
        let fastUnits = try #require(fastResult["units"] as? [[String: Any]])
        #expect(fastUnits.map { $0["md5"] as? String ?? "" } == expected)

        let slowUnits = try #require(slowResult["units"] as? [[String: Any]])
        let sequences = slowUnits.map { $0["seq"] as? Int ?? -1 }
        #expect(slowUnits.count < 150)
        #expect(slowUnits.first?["key"] as? Int == 1)
        // After every gap the next access unit is a keyframe, and what did
        // arrive is byte for byte what FFmpeg has at that position.
        var gaps = 0
        var skipped = 0
        for (index, unit) in slowUnits.enumerated() {
            let sequence = sequences[index]
            #expect(unit["md5"] as? String == expected[sequence])
            if index > 0, sequence != sequences[index - 1] + 1 {
                gaps += 1
                skipped += sequence - sequences[index - 1] - 1
                #expect(unit["key"] as? Int == 1, "after the gap before \(sequence)")
            }
        }
        skipped += 149 - (sequences.last ?? 149)
        #expect(gaps >= 1)

        // The server's own count for each client, taken before it closed.
        #expect(statistics.clients.count == 2)
        let fastFigures = try #require(statistics.clients.first { $0.skips == 0 })
        let slowFigures = try #require(statistics.clients.first { $0.skips > 0 })
        #expect(fastFigures.accessUnitsSent == 150)
        #expect(slowFigures.accessUnitsSent == slowUnits.count)
        #expect(slowFigures.accessUnitsSkipped == skipped)
        #expect(slowFigures.accessUnitsSent + slowFigures.accessUnitsSkipped == 150)
        #expect(statistics.skips == slowFigures.skips)
        print(
            "slow client: \(slowUnits.count) of 150 access units, \(slowFigures.skips) skips, "
                + "\(slowFigures.accessUnitsSkipped) skipped; fast client: \(fastUnits.count)")
    }

    /// One slow client and a small bound on all queues together: the server
    /// makes the client furthest behind skip before its own (larger) bound or
    /// a GOP would, and says so in its log.
    @Test func totalQueueBoundMakesTheFurthestClientSkip() throws {
        let directory = try TemporaryDirectory()
        let (_, samples) = try Self.makeStream(
            codec: .h264, frames: 60, gop: 60, size: "640x360", bitrate: "8M", in: directory)
        var configuration = WebStreamServer.Configuration()
        configuration.socketSendBuffer = 4096
        configuration.totalQueueBytes = 150_000
        let harness = try ServerHarness(configuration: configuration, samples: samples, clients: 1)
        let received = try runPythonReceiver(port: harness.port, delay: 0.05)
        let statistics = try #require(harness.finish())
        let units = try #require(received["units"] as? [[String: Any]])
        let client = try #require(statistics.clients.first)
        #expect(client.skips >= 1)
        #expect(units.count == client.accessUnitsSent)
        #expect(client.accessUnitsSent + client.accessUnitsSkipped == 60)
        #expect(harness.log.contains { $0.contains("skips to the next keyframe: all queues hold") })
    }

    /// Connections that send no request head: one past the bound closes the
    /// oldest at once, the others are closed when their time is up; the
    /// server serves on.
    @Test func idleConnectionsAreBounded() throws {
        var configuration = WebStreamServer.Configuration()
        configuration.maximumPendingRequests = 2
        configuration.requestTimeoutSeconds = 0.5
        let harness = try ServerHarness(configuration: configuration, samples: [], clients: 0)
        let script = """
            import socket, sys, time, http.client
            port = int(sys.argv[1])
            idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(2)]
            time.sleep(0.2)
            third = socket.create_connection(("127.0.0.1", port), timeout=5)
            print("oldest", idle[0].recv(1) == b"")
            print("others", third.recv(1) == b"" and idle[1].recv(1) == b"")
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/stats")
            print("stats", c.getresponse().status)
            """
        let result = try runProcess("/usr/bin/python3", ["-c", script, String(harness.port)])
        let statistics = harness.stop()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(String(decoding: result.stdout, as: UTF8.self) == "oldest True\nothers True\nstats 200\n")
        #expect(statistics?.clientsRefused == 1)
        #expect(statistics?.httpErrors == 2)
    }

    /// HTTP routes, the handshake by hand, ping/pong, a fragmented client
    /// message, close, and an unmasked frame answered with 1002.
    @Test func protocolAgainstPython() throws {
        let harness = try ServerHarness(samples: [], clients: 0)
        defer { harness.stop() }
        let result = try runProcess("/usr/bin/python3", ["-c", Self.protocolScript, String(harness.port)])
        try #require(result.status == 0, "\(result.stderr.suffix(3000))")
        let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(json["pageStatus"] as? Int == 200)
        #expect(json["pageType"] as? String == "text/html; charset=utf-8")
        #expect(json["page"] as? String == Data(harness.page).base64EncodedString())
        #expect(json["statsStatus"] as? Int == 200)
        #expect(json["statsHasClients"] as? Bool == true)
        #expect(json["notFound"] as? Int == 404)
        #expect(json["garbage"] as? Int == 400)
        #expect(json["post"] as? Int == 405)
        #expect(json["plainStream"] as? Int == 426)
        #expect(json["acceptMatches"] as? Bool == true)
        #expect(json["unmaskedCloseCode"] as? Int == 1002)
        #expect(json["pong"] as? Bool == true)
        #expect(json["fragmentedReply"] as? Bool == true)
        #expect(json["closeCode"] as? Int == 1000)
    }

    static let protocolScript = """
        import asyncio, base64, hashlib, json, os, socket, sys, http.client, websockets
        port = int(sys.argv[1])
        out = {}
        def request(method, path):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request(method, path)
            r = c.getresponse()
            body = r.read()
            c.close()
            return r.status, r.getheader("Content-Type"), body
        status, kind, body = request("GET", "/")
        out["pageStatus"], out["pageType"], out["page"] = status, kind, base64.b64encode(body).decode()
        status, kind, body = request("GET", "/stats")
        out["statsStatus"], out["statsHasClients"] = status, "clients" in json.loads(body)
        out["notFound"] = request("GET", "/nope")[0]
        out["post"] = request("POST", "/")[0]
        out["plainStream"] = request("GET", "/stream")[0]
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"\\x00garbage\\r\\n\\r\\n")
        out["garbage"] = int(s.recv(4096).split(b" ")[1])
        s.close()
        # The handshake by hand, then an unmasked frame.
        key = base64.b64encode(os.urandom(16)).decode()
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(("GET /stream HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
                   f"Sec-WebSocket-Key: {key}\\r\\nSec-WebSocket-Version: 13\\r\\n\\r\\n").encode())
        head = b""
        while b"\\r\\n\\r\\n" not in head: head += s.recv(1)
        want = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        out["acceptMatches"] = head.startswith(b"HTTP/1.1 101 ") and f"Sec-WebSocket-Accept: {want}\\r\\n".encode() in head
        s.sendall(b"\\x82\\x01\\x00")
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk: break
            data += chunk
        # Server frames: skip to the close frame (opcode 8).
        i, code = 0, None
        while i + 2 <= len(data):
            opcode, length = data[i] & 15, data[i + 1] & 127
            j = i + 2
            if length == 126: length, j = int.from_bytes(data[j:j + 2], "big"), j + 2
            elif length == 127: length, j = int.from_bytes(data[j:j + 8], "big"), j + 8
            if opcode == 8: code = int.from_bytes(data[j:j + 2], "big")
            i = j + length
        out["unmaskedCloseCode"] = code
        s.close()
        async def session():
            async with websockets.connect(f"ws://127.0.0.1:{port}/stream") as ws:
                pong = await ws.ping(b"hello")
                await asyncio.wait_for(pong, 10)
                out["pong"] = True
                await ws.send(["st", "ats"])
                while True:
                    message = await asyncio.wait_for(ws.recv(), 10)
                    if isinstance(message, str) and "clientsServed" in message:
                        out["fragmentedReply"] = True
                        break
                await ws.close(code=1000)
                out["closeCode"] = ws.close_code
        asyncio.run(session())
        print(json.dumps(out))
        """
}
