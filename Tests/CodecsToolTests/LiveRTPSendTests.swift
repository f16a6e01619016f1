import Foundation
import MediaCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `codecs stream send -i IN.y4m rtp://…` with the live defaults: Constrained
/// Baseline without B-frames (RTP timestamps never step backwards), and
/// `--loop`; packets caught on 127.0.0.1 by the test itself.
@Suite struct LiveRTPSendTests {
    static var codecs: String { TestPaths.codecsExecutable.path }

    /// The RTP packets that reach 127.0.0.1:`port` while `running` says so
    /// (and 0.5 s after), as (sequence number, timestamp).
    final class Capture: @unchecked Sendable {
        let descriptor: Int32
        private let lock = NSLock()
        private var packets: [(sequence: UInt16, timestamp: UInt32)] = []

        init(port: UInt16) throws {
            descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            var size: Int32 = 8 << 20
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw ProcessError("cannot bind 127.0.0.1:\(port)") }
        }

        deinit { close(descriptor) }

        /// Reads until `done` is true and nothing came for 0.3 s.
        func read(until done: () -> Bool) {
            var buffer = [UInt8](repeating: 0, count: 65536)
            var quiet = 0
            while quiet < 3 || !done() {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                guard count >= 12 else {
                    quiet += 1
                    continue
                }
                quiet = 0
                let sequence = UInt16(buffer[2]) << 8 | UInt16(buffer[3])
                let timestamp = buffer[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                lock.withLock { packets.append((sequence, timestamp)) }
            }
        }

        /// The timestamps in sequence-number order (the sequence unwrapped).
        var timestamps: [UInt32] {
            let taken = lock.withLock { packets }
            guard let first = taken.first else { return [] }
            var previous = first.sequence
            var extended = 0
            var ordered: [(Int, UInt32)] = []
            for packet in taken {
                extended += Int(Int16(bitPattern: packet.sequence &- previous))
                previous = packet.sequence
                ordered.append((extended, packet.timestamp))
            }
            return ordered.sorted { $0.0 < $1.0 }.map(\.1)
        }
        var count: Int { lock.withLock { packets.count } }
    }

    /// Times between consecutive packets that go backwards (modulo 2^32).
    static func backwardSteps(_ timestamps: [UInt32]) -> Int {
        zip(timestamps, timestamps.dropFirst()).filter { Int32(bitPattern: $1 &- $0) < 0 }.count
    }

    @Test func aY4MClipGoesOutWithoutReorderingAsConstrainedBaseline() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("source.y4m")
        try ffmpegTestPattern(size: "320x240", frames: 150, arguments: ["-pix_fmt", "yuv420p"], to: source)
        let port = try freeRTPPortPair()
        let capture = try Capture(port: port)
        let sender = try BackgroundProcess(
            Self.codecs, ["stream", "send", "-i", source, "rtp://127.0.0.1:\(port)", "--no-pace"], in: directory)
        let finished = ManagedAtomicFlag()
        let reader = Thread { capture.read(until: { finished.value }) }
        reader.start()
        let sent = sender.wait(timeout: 60)
        finished.value = true
        while !capture.finishedReading(reader) { usleep(20_000) }
        #expect(sent.status == 0, "\(sent.stderr)")
        let timestamps = capture.timestamps
        #expect(Self.backwardSteps(timestamps) == 0, "\(timestamps)")
        #expect(Set(timestamps).count == 150, "\(sent.stderr)")

        // Received by `codecs stream receive`: Constrained Baseline, and our
        // decode of it equals FFmpeg's, frame by frame.
        let received = directory.path("received.h264")
        let receiverPort = try freeRTPPortPair()
        let receiver = try BackgroundProcess(
            Self.codecs, ["stream", "receive", "rtp://@127.0.0.1:\(receiverPort)", "-o", received, "--timeout", "2"],
            in: directory)
        #expect(waitUntilUDPPortIsBound(receiverPort))
        let second = try runProcess(Self.codecs, ["stream", "send", "-i", source, "rtp://127.0.0.1:\(receiverPort)"])
        let got = receiver.wait(timeout: 30)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(got.status == 0, "\(got.stderr)")
        let streams = try ffprobeStreamDictionaries(path: received)
        #expect(streams.first?["profile"] as? String == "Constrained Baseline", "\(streams)")
        let decoded = directory.path("decoded.y4m")
        let decode = try runProcess(Self.codecs, ["decode", "-i", received, "-o", decoded])
        #expect(decode.status == 0, "\(decode.stderr)")
        let ours = try ffmpegFrameMD5(path: decoded, everyFrame: true, pixelFormat: "yuv420p")
        let ffmpeg = try ffmpegFrameMD5(path: received, everyFrame: true, pixelFormat: "yuv420p")
        #expect(ours.count == 150)
        #expect(ours == ffmpeg)
    }

    @Test func loopSendsTheClipAgainWithTimesIncreasing() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("short.y4m")
        try ffmpegTestPattern(size: "160x96", frames: 10, arguments: ["-pix_fmt", "yuv420p"], to: source)
        let port = try freeRTPPortPair()
        let capture = try Capture(port: port)
        let sender = try BackgroundProcess(
            Self.codecs, ["stream", "send", "-i", source, "rtp://127.0.0.1:\(port)", "--loop"], in: directory)
        let finished = ManagedAtomicFlag()
        let reader = Thread { capture.read(until: { finished.value }) }
        reader.start()
        // Until 25 frames' packets came (more than the clip's 10), or a generous bound.
        for _ in 0..<3000 where Set(capture.timestamps).count < 25 { usleep(10_000) }
        sender.signal(SIGINT)
        let sent = sender.wait(timeout: 30)
        finished.value = true
        while !capture.finishedReading(reader) { usleep(20_000) }
        // A stop signal is the exit status (128 + SIGINT), after the summary.
        #expect(sent.status == 128 + SIGINT, "\(sent.stderr)")
        let timestamps = capture.timestamps
        #expect(Set(timestamps).count >= 25, "\(sent.stderr)")
        #expect(Self.backwardSteps(timestamps) == 0, "\(timestamps)")
        #expect(sent.stderr.contains("times over"), "\(sent.stderr)")
    }
}

/// A flag shared with the reading thread.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = false
    var value: Bool {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

extension LiveRTPSendTests.Capture {
    /// Whether `thread` finished.
    func finishedReading(_ thread: Thread) -> Bool { thread.isFinished }
}
