// Rates following a shaped path: `codecs stream serve --whep --adaptive-bitrate` (or `codecs stream receive whip://`)
// and headless Chromium in one network namespace whose loopback has a token-bucket (tbf) qdisc, 1 Mb/s then 0.5 Mb/s.
import Foundation
import TestSupport
import Testing

/// Whether this machine can shape a path: root, ip, tc, unshare, nsenter and curl, a network namespace that takes
/// a veth pair and a default route, whose loopback takes an htb qdisc, a u32 filter and a tbf qdisc, and Chromium.
enum ShapedPath {
    static let available: Bool = {
        guard getuid() == 0, ChromiumCongestionTests.chromiumInstalled else { return false }
        for tool in ["ip", "tc", "unshare", "nsenter", "curl"] where findExecutable(tool) == nil { return false }
        let probe = try? runProcess("unshare", ["-n", "sh", "-c", ChromiumShapedPathTests.shaping])
        return probe?.status == 0
    }()
}

@Suite(.serialized)
struct ChromiumShapedPathTests {
    /// `tc qdisc … tbf` for `rate` under the UDP class of the namespace's loopback. Its bucket (16 kbit, 2000
    /// bytes) holds a whole packet: tbf drops every packet larger than its burst, so with 4 kbit (500 bytes) no DTLS
    /// flight carrying a certificate ever passed and the handshake never completed.
    static func tbf(_ verb: String, rate: String) -> String {
        "tc qdisc \(verb) dev lo parent 1:20 handle 20: tbf rate \(rate) burst 16kbit latency 400ms"
    }

    /// The namespace's loopback up, its UDP (the media, ICE, DTLS and RTCP) through a tbf at 1 Mb/s; TCP (HTTP,
    /// Chromium's driver) unshaped: an htb root sorting by a u32 filter on the IP protocol.
    ///
    /// Chromium, given no camera or microphone permission, gathers one host candidate: the local address of its
    /// default route (it ignores loopback). So the namespace also gets a veth pair, one end with 10.200.0.1/24
    /// and a default route through it. Chromium's candidate is then 10.200.0.1 (behind an mDNS name); its checks
    /// go from there to our 127.0.0.1 candidate and back, both local addresses of the namespace, so every packet
    /// crosses the shaped loopback and none the veth.
    static let shaping =
        "ip link set lo up && ip link add v0 type veth peer name v1 && ip addr add 10.200.0.1/24 dev v0 && "
        + "ip link set v0 up && ip link set v1 up && ip route add default via 10.200.0.2 dev v0 && "
        + "tc qdisc add dev lo root handle 1: htb default 10 && "
        + "tc class add dev lo parent 1: classid 1:10 htb rate 10gbit && "
        + "tc class add dev lo parent 1: classid 1:20 htb rate 10gbit && \(tbf("add", rate: "1mbit")) && "
        + "tc filter add dev lo parent 1: protocol ip u32 match ip protocol 17 0xff flowid 1:20"

    /// The server's full statistics read inside the namespace of `pid`, or nil.
    static func statistics(pid: String, port: Int, token: String) -> [String: Any]? {
        guard
            let result = try? runProcess(
                "nsenter",
                [
                    "-n", "-t", pid, "curl", "-s", "-m", "2", "-H", "Authorization: Bearer \(token)",
                    "http://127.0.0.1:\(port)/whep/stats",
                ]), result.status == 0
        else { return nil }
        return try? JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
    }

    /// Kills every process still in the network namespace `namespace` (a `net:[…]` link of /proc/PID/ns/net):
    /// when a test stops early, Chromium and its driver outlive the killed peer script and would keep the namespace.
    static func stopProcesses(inNamespace namespace: String) {
        let files = FileManager.default
        for entry in (try? files.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let process = Int32(entry), process != getpid(),
                (try? files.destinationOfSymbolicLink(atPath: "/proc/\(entry)/ns/net")) == namespace
            else { continue }
            kill(process, SIGKILL)
        }
    }

    /// `codecs ARGUMENTS` started in a new network namespace shaped by ``shaping``, with the namespace's process
    /// id (for `nsenter -t`), or nil when it did not start.
    static func startShaped(_ arguments: [String], in directory: TemporaryDirectory) throws -> (
        process: BackgroundProcess, pid: String
    )? {
        let pidPath = directory.path("namespace.pid")
        let process = try BackgroundProcess(
            "unshare",
            [
                "-n", "sh", "-c", "\(shaping) && echo $$ > \(pidPath) && exec \"$0\" \"$@\"",
                TestPaths.codecsExecutable.path,
            ]
                + arguments, in: directory)
        for _ in 0..<100 {
            usleep(50_000)
            let pid =
                (try? String(contentsOfFile: pidPath, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                ?? ""
            if !pid.isEmpty { return (process, pid) }
        }
        return nil
    }

    /// The path narrows from 1 Mb/s to 0.5 Mb/s (tbf on the namespace's loopback, 12 s then 18 s): over the second
    /// half of each phase the shared encode's mean target is 0.5–1.0 × the tbf rate, and every frame Chromium
    /// received and did not drop was decoded. The second phase is the longer: after the step the target falls to
    /// 0.1–0.2 Mb/s and climbs back at about 8 %/s.
    @Test(
        .enabled(
            if: ShapedPath.available,
            "needs root, ip, tc, unshare, nsenter, curl, a network namespace with veth, htb, u32 and tbf, and Chromium")
    )
    func theSharedEncodeFollowsAShapedPath() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.y4m")
        try runChecked(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                "testsrc2=size=320x240:rate=30,noise=alls=40:allf=t", "-frames:v", "150", input,
            ])
        let port = try freeTCPPort()
        let token = "shaped-path-token"
        let shaped = try Self.startShaped(
            [
                "stream", "serve", "-i", input, "--loop", "--whep", "127.0.0.1:\(port)", "--token", token, "--bitrate",
                "2M", "--adaptive-bitrate", "--linger", "1", "--stats-json", directory.path("stats.json"),
            ], in: directory)
        let (server, pid) = try #require(shaped, "the server did not start in its namespace")
        let namespace = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/ns/net")
        defer { Self.stopProcesses(inNamespace: namespace) }
        let viewer = try BackgroundProcess(
            "nsenter",
            [
                "-n", "-t", pid, "/usr/bin/python3",
                WHEPPeerTests.peers.appendingPathComponent("whep_chromium.py").path,
                "http://127.0.0.1:\(port)/#token=\(token)", "1000000", "40",
            ], in: directory)
        // The phases start when the viewer has connected.
        var start: Date?
        for _ in 0..<60 where start == nil {
            usleep(250_000)
            if let stats = Self.statistics(pid: pid, port: port, token: token), stats["sharedTarget"] as? Int != nil {
                start = Date()
            }
        }
        let started = try #require(start, "no viewer connected with transport-cc feedback within 15 s")
        var samples: [(seconds: Double, target: Int)] = []
        var narrowed = false
        while Date().timeIntervalSince(started) < 30 {
            usleep(500_000)
            let seconds = Date().timeIntervalSince(started)
            if !narrowed && seconds >= 12 {
                narrowed = true
                _ = try runProcess("nsenter", ["-n", "-t", pid, "sh", "-c", Self.tbf("change", rate: "500kbit")])
            }
            if let target = Self.statistics(pid: pid, port: port, token: token)?["sharedTarget"] as? Int {
                samples.append((seconds, target))
            }
        }
        let page = viewer.wait(timeout: 30)
        server.signal(SIGINT)
        let served = server.wait(timeout: 15)
        #expect(served.status == 128 + SIGINT, "\(served.stderr.suffix(2000))")
        #expect(page.status == 0, "\(page.stderr.suffix(2000))")
        func mean(_ range: ClosedRange<Double>) -> Double {
            let inside = samples.filter { range.contains($0.seconds) }.map { Double($0.target) }
            return inside.isEmpty ? 0 : inside.reduce(0, +) / Double(inside.count)
        }
        let first = mean(6...12)
        let second = mean(21...30)
        print(
            "shaped path: mean shared target \(Int(first)) b/s over 6–12 s at 1 Mb/s, \(Int(second)) b/s over "
                + "21–30 s at 0.5 Mb/s; samples \(samples.map { "\(Int($0.seconds * 10) / 10):\($0.target)" })")
        #expect((500_000...1_000_000).contains(first))
        // Under the 0.5 Mb/s, and not collapsed: in five runs of twelve the step met a target near 0.9 Mb/s,
        // the loss-based cap took it to 0.1–0.2 Mb/s and it climbed back at 8 % a second, so the mean over
        // 21–30 s was 0.24–0.32 Mb/s there (0.42–0.44 in the other runs).
        #expect((150_000...500_000).contains(second))
        let result = try #require(try JSONSerialization.jsonObject(with: page.stdout) as? [String: Any])
        let inbound = try #require(result["inbound"] as? [String: Any], "\(result)")
        let received = inbound["framesReceived"] as? Int ?? -1
        let dropped = inbound["framesDropped"] as? Int ?? 0
        let decoded = inbound["framesDecoded"] as? Int ?? -2
        print(
            "shaped path: Chromium received \(received) frames, dropped \(dropped), decoded \(decoded); "
                + ["packetsReceived", "packetsLost", "nackCount", "pliCount", "keyFramesDecoded", "freezeCount"].map {
                    "\($0) \(inbound[$0] ?? "?")"
                }.joined(separator: ", "))
        #expect(received > 0)
        #expect(decoded == received - dropped)
    }

    /// Chromium publishes over the same shaped path (1 Mb/s, then 0.5 Mb/s, 12 s each) to
    /// `codecs stream receive whip://`, its estimator fed by our transport-cc feedback: over the second half of each
    /// phase the mean of its estimate (the selected candidate pair's availableOutgoingBitrate, from its own
    /// getStats()) is 0.5–1.2 × the tbf rate, and FFmpeg decodes the H.264 we wrote without an error. Its send
    /// rate (outbound-rtp bytesSent + headerBytesSent) is printed, not asserted: a busy machine draws the canvas
    /// at a few frames a second, and then the encoder sends less than the estimate allows.
    @Test(
        .enabled(
            if: ShapedPath.available,
            "needs root, ip, tc, unshare, nsenter, curl, a network namespace with veth, htb, u32 and tbf, and Chromium")
    )
    func chromiumsSendRateFollowsAShapedPath() throws {
        let directory = try TemporaryDirectory()
        let port = try freeTCPPort()
        let output = directory.path("received.h264")
        let shaped = try Self.startShaped(
            WHEPPeerTests.whipReceive(port: port, output: output, stats: directory.path("stats.json")), in: directory)
        let (receiver, pid) = try #require(shaped, "the receiver did not start in its namespace")
        let namespace = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/ns/net")
        defer { Self.stopProcesses(inNamespace: namespace) }
        let connectedPath = directory.path("connected")
        let publisher = try BackgroundProcess(
            "nsenter",
            [
                "-n", "-t", pid, "/usr/bin/python3",
                WHEPPeerTests.peers.appendingPathComponent("whip_chromium_shaped.py").path,
                "http://127.0.0.1:\(port)/", "/live", "24", connectedPath,
            ], in: directory)
        // The phases start when Chromium's peer connection is connected.
        var connected: Date?
        for _ in 0..<300 where connected == nil {
            usleep(100_000)
            if FileManager.default.fileExists(atPath: connectedPath) { connected = Date() }
        }
        let start = try #require(connected, "Chromium's peer connection did not connect within 30 s")
        while Date().timeIntervalSince(start) < 12 { usleep(50_000) }
        _ = try runProcess("nsenter", ["-n", "-t", pid, "sh", "-c", Self.tbf("change", rate: "500kbit")])
        let published = publisher.wait(timeout: 40)
        let received = receiver.wait(timeout: 15)
        #expect(received.status == 0, "\(received.stderr.suffix(2000))")
        #expect(published.status == 0, "\(published.stderr.suffix(2000))")
        let result = try #require(try JSONSerialization.jsonObject(with: published.stdout) as? [String: Any])
        let samples = try #require(result["samples"] as? [[String: Any]], "\(result)")
        let points = samples.compactMap { sample -> (seconds: Double, bytes: Double)? in
            guard let seconds = (sample["seconds"] as? NSNumber)?.doubleValue,
                let bytes = (sample["bytes"] as? NSNumber)?.doubleValue
            else { return nil }
            return (seconds, bytes)
        }
        /// The mean send rate between the first sample at or after `range`'s start and the last at or before its end.
        func rate(_ range: ClosedRange<Double>) -> Double {
            guard let first = points.first(where: { $0.seconds >= range.lowerBound }),
                let last = points.last(where: { $0.seconds <= range.upperBound }), last.seconds > first.seconds
            else { return 0 }
            return (last.bytes - first.bytes) * 8 / (last.seconds - first.seconds)
        }
        let sentFirst = rate(6...12)
        let sentSecond = rate(18...24)
        let estimates = samples.compactMap { sample -> (seconds: Double, estimate: Double)? in
            guard let seconds = (sample["seconds"] as? NSNumber)?.doubleValue,
                let estimate = (sample["availableOutgoingBitrate"] as? NSNumber)?.doubleValue, estimate > 0
            else { return nil }
            return (seconds, estimate)
        }
        func meanEstimate(_ range: ClosedRange<Double>) -> Double {
            let inside = estimates.filter { range.contains($0.seconds) }.map(\.estimate)
            return inside.isEmpty ? 0 : inside.reduce(0, +) / Double(inside.count)
        }
        let first = meanEstimate(6...12)
        let second = meanEstimate(18...24)
        print(
            "shaped path: Chromium's mean estimate \(Int(first)) b/s over 6–12 s at 1 Mb/s, \(Int(second)) b/s over "
                + "18–24 s at 0.5 Mb/s; it sent \(Int(sentFirst)) and \(Int(sentSecond)) b/s; estimates "
                + "\(estimates.map { "\(Int($0.seconds)):\(Int($0.estimate) / 1000)k" })")
        #expect((500_000...1_200_000).contains(first))
        #expect((250_000...600_000).contains(second))
        let stop = try #require(result["stop"] as? [String: Any], "\(result)")
        let outbound = try #require(stop["outbound"] as? [String: Any], "\(stop)")
        let decode = try runProcess(
            "ffmpeg", ["-hide_banner", "-nostdin", "-v", "error", "-i", output, "-f", "framemd5", "-"])
        let frames = String(decoding: decode.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        print(
            "shaped path: Chromium encoded \(outbound["framesEncoded"] ?? "?") frames, sent "
                + "\(outbound["framesSent"] ?? "?"); "
                + "FFmpeg decoded \(frames.count) frames of what we wrote; errors: \(decode.stderr.prefix(500))")
        #expect(decode.status == 0)
        #expect(frames.count > 0)
        #expect(decode.stderr.isEmpty)
    }
}
