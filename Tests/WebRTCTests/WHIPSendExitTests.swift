import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `codecs stream send … whip+http://…`'s exit status: 0 after a complete
/// publish, 1 with the reason when its endpoint stops answering or refuses
/// its token.
@Suite(.serialized)
struct WHIPSendExitTests {
    static func send(_ input: String, port: Int, _ extra: [String] = []) -> [String] {
        ["stream", "send", "-i", input, "whip+http://127.0.0.1:\(port)/live"] + extra
    }

    /// `codecs stream send` publishes a `frames`-frame baseline clip (keyframe every `gop`) with `sendOptions` to
    /// `codecs stream receive whip://127.0.0.1:PORT/live`, both writing `--stats-json`: both must exit 0 and the
    /// received stream decode to the clip's frames (ffmpeg's framemd5). Returns both sides' statistics.
    static func publishThroughCLI(
        frames: Int, gop: Int, _ sendOptions: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (client: [String: Any], endpoint: [String: Any]) {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: frames, gop: gop)
        let output = directory.path("received.h264")
        let receivedPath = directory.path("received.json")
        let (endpoint, port) = try startEndpoint(output: output, in: directory, ["--stats-json", receivedPath])
        let sentPath = directory.path("sent.json")
        let sent = try runProcess(
            TestPaths.codecsExecutable.path, send(input, port: port, sendOptions + ["--stats-json", sentPath]))
        let received = endpoint.wait(timeout: 30)
        #expect(sent.status == 0, "\(sent.stderr.suffix(2000))", sourceLocation: sourceLocation)
        #expect(received.status == 0, "\(received.stderr.suffix(2000))", sourceLocation: sourceLocation)
        #expect(try ffmpegFrameMD5(path: output) == ffmpegFrameMD5(path: input), sourceLocation: sourceLocation)
        let client = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sentPath))) as? [String: Any],
            sourceLocation: sourceLocation)
        return (client, try WHEPPeerTests.stats(receivedPath))
    }

    /// Starts `codecs stream receive whip://HOST:PORT/live` on a free port (`host` 127.0.0.1 or ::1) and waits
    /// until its HTTP port listens (read from /proc/net/tcp or tcp6, so that no connection is spent finding out).
    static func startEndpoint(
        output: String, in directory: TemporaryDirectory, host: String = "127.0.0.1", _ extra: [String] = []
    ) throws -> (BackgroundProcess, Int) {
        for _ in 0..<5 {
            let port = try freeTCPPort()
            let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            let endpoint = try BackgroundProcess(
                TestPaths.codecsExecutable.path,
                ["stream", "receive", "whip://\(authority)/live", "-o", output, "--timeout", "30"] + extra,
                in: directory)
            if host.contains(":") ? ipv6LoopbackListens(port, within: 5) : tcpPortListens(port, within: 5) {
                return (endpoint, port)
            }
            endpoint.wait(timeout: 0)
        }
        throw ProcessError("the WHIP endpoint did not listen on \(host)")
    }

    /// Whether a socket listens on TCP [::1]:`port` (`/proc/net/tcp6`, state 0A), looked up every 20 ms for up
    /// to `seconds`.
    static func ipv6LoopbackListens(_ port: Int, within seconds: Double) -> Bool {
        let wanted = String(format: "00000000000000000000000001000000:%04X", port)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let table = (try? String(contentsOfFile: "/proc/net/tcp6", encoding: .utf8)) ?? ""
            let listening = table.split(separator: "\n").contains {
                let fields = $0.split(separator: " ")
                return fields.count > 3 && fields[1] == wanted && fields[3] == "0A"
            }
            if listening { return true }
            usleep(20_000)
        }
        return false
    }

    /// What the background processes in `directory` wrote to standard error so far.
    static func logs(in directory: TemporaryDirectory) -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path(""))) ?? []
        return names.filter { $0.hasSuffix(".err") }.compactMap {
            try? String(contentsOfFile: directory.path($0), encoding: .utf8)
        }.joined()
    }

    /// An answer naming nine silent loopback candidates (127.0.0.2–10):
    /// `codecs stream send --timeout 1` checks only eight of them, each at
    /// most once per 200 ms, one check per 50 ms in all, and says why it
    /// gave up.
    @Test func checksOnlyPacedLoopbackCandidates() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 2, gop: 2)
        let sockets = try (2...10).map { try WHIPClientSignallingTests.loopbackSocket("127.0.0.\($0)") }
        defer { for socket in sockets { close(socket.fd) } }
        let answer = WHIPClientSignallingTests.answer(
            candidates: sockets.enumerated().map { (host: "127.0.0.\($0.offset + 2)", port: $0.element.port) })
        let endpoint = try FakeHTTPEndpoint { _, _ in WHIPClientSignallingTests.created(answer) }
        let sent = try runProcess(
            TestPaths.codecsExecutable.path, Self.send(input, port: endpoint.port, ["--timeout", "1"]))
        #expect(sent.status == 1)
        #expect(sent.stderr.contains("no ICE check succeeded (8 remote candidates checked"), "\(sent.stderr)")
        let counts = sockets.map { WHIPClientSignallingTests.drain($0.fd).count }
        #expect(counts[8] == 0, "the ninth candidate is past the limit")
        #expect(counts.prefix(8).allSatisfy { (1...6).contains($0) }, "\(counts)")
        #expect(counts.reduce(0, +) <= 21, "\(counts)")
    }

    /// A whole clip to `codecs stream receive whip://…`: both exit 0 and
    /// the recording decodes to the clip's frames, bit for bit. (The
    /// endpoint ends at the publisher's BYE, so the DELETE finds it gone.)
    @Test func aCompletePublishExitsZero() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 30, gop: 10)
        let output = directory.path("received.h264")
        let (endpoint, port) = try Self.startEndpoint(output: output, in: directory)
        let sent = try runProcess(TestPaths.codecsExecutable.path, Self.send(input, port: port))
        let received = endpoint.wait(timeout: 30)
        #expect(sent.status == 0, "\(sent.stderr.suffix(2000))")
        #expect(sent.stderr.contains("sent 30 access units"))
        #expect(received.status == 0, "\(received.stderr.suffix(2000))")
        #expect(try ffmpegFrameMD5(path: output) == ffmpegFrameMD5(path: input))
    }

    /// The endpoint is killed mid-stream: the publisher stops with exit 1
    /// and says why once consent (2 s here) expires, instead of sending on.
    @Test func anEndpointThatDiesEndsThePublish() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 25, gop: 25)
        let output = directory.path("received.h264")
        let (endpoint, port) = try Self.startEndpoint(output: output, in: directory)
        let sender = try BackgroundProcess(
            TestPaths.codecsExecutable.path, Self.send(input, port: port, ["--loop", "--consent-timeout", "2"]),
            in: directory)
        // Until the endpoint logs the publisher's arrival (in its standard
        // error file, in the directory), then a moment of media.
        for _ in 0..<500 where !Self.logs(in: directory).contains("publisher") { usleep(20_000) }
        usleep(300_000)
        endpoint.signal(SIGKILL)
        endpoint.wait(timeout: 10)
        let result = sender.wait(timeout: 30)
        #expect(result.status == 1, "\(result.stderr.suffix(2000))")
        #expect(
            result.stderr.contains(
                "the WHIP endpoint stopped answering: no response to consent checks for 2.0 s (RFC 7675); media stopped"
            ))
    }

    /// The endpoint ends the session early (`--frames 5`, then BYE and
    /// close_notify): the publisher stops with exit 1 and says so.
    @Test func anEndpointThatEndsTheSessionEndsThePublish() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 25, gop: 25)
        let output = directory.path("received.h264")
        let (endpoint, port) = try Self.startEndpoint(output: output, in: directory, ["--frames", "5"])
        let sent = try runProcess(TestPaths.codecsExecutable.path, Self.send(input, port: port, ["--loop"]))
        #expect(endpoint.wait(timeout: 30).status == 0)
        #expect(sent.status == 1)
        #expect(sent.stderr.contains("the WHIP endpoint ended the session ("), "\(sent.stderr.suffix(2000))")
    }

    /// --token-file: the token goes out as `Authorization: Bearer`, a 401
    /// is reported as a refused token, and the token is never printed.
    @Test func aRefusedTokenExitsOneWithoutPrintingIt() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 2, gop: 2)
        let token = "s3cr3t-T0ken_value"
        try Data("\(token)\n".utf8).write(to: URL(fileURLWithPath: directory.path("token")))
        let endpoint = try FakeHTTPEndpoint { _, _ in WHIPClientSignallingTests.unauthorized }
        let sent = try runProcess(
            TestPaths.codecsExecutable.path,
            Self.send(input, port: endpoint.port, ["--token-file", directory.path("token")]))
        #expect(sent.status == 1)
        #expect(sent.stderr.contains("the endpoint refused the token (401)"), "\(sent.stderr)")
        #expect(!sent.stderr.contains(token))
        #expect(endpoint.requests.map(\.authorization) == ["Bearer \(token)"])
        let both = try runProcess(
            TestPaths.codecsExecutable.path,
            Self.send(input, port: endpoint.port, ["--token", "a", "--token-file", directory.path("token")]))
        #expect(both.status == 2 && both.stderr.contains("give --token or --token-file, not both"))
    }
}
