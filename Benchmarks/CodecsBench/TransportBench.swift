import FormatConv
import Foundation
import MediaCore
import MediaIO
import Synchronization

/// One network transport measured on loopback.
private struct TransportUnderTest {
    var name: String
    var socket: Int32
    /// The URL each side uses, for a port.
    var playerURL: (Int) -> String
    var publisherURL: (Int) -> String
    var options: StreamOptions
}

/// Arrival times of access units, written by the receiving thread.
private final class Arrivals: Sendable {
    let state = Mutex<(times: [ContinuousClock.Instant], error: String?, done: Bool)>(([], nil, false))
}

/// Loopback latency per transport: `StreamPublisher` → libavformat → socket →
/// libavformat → `StreamPlayer`, from the moment a sample is handed to the
/// publisher to the moment the player returns it, at 30 frames per second
/// (x264 zero-latency, no B-frames, 640×360). p50 and p95 per transport,
/// over every access unit but the first (which also waits for the
/// connection to be set up).
///
/// HLS is not measured: a segment is readable only when it is complete, so
/// its latency is at least the segment duration by design.
func benchmarkTransports(_ frames: [PixelBuffer], report: Report) throws {
    let stream = try encodeStream(
        frames, codec: .h264, settings: EncodeSettings(preset: "veryfast", keyint: 30, realTime: true),
        label: "x264 zero-latency")
    let quickTimeouts = StreamOptions(openTimeout: 5, ioTimeout: 5)
    var listening = quickTimeouts
    listening.listen = true
    var rtspUDP = listening
    rtspUDP.rtspTransport = .udp
    var rtspUDPPublisher = quickTimeouts
    rtspUDPPublisher.rtspTransport = .udp
    let udp = Int32(SOCK_DGRAM.rawValue)
    let tcp = Int32(SOCK_STREAM.rawValue)
    let transports: [(TransportUnderTest, StreamOptions)] = [
        (
            TransportUnderTest(
                name: "SRT", socket: udp, playerURL: { "srt://127.0.0.1:\($0)?mode=listener&latency=20000" },
                publisherURL: { "srt://127.0.0.1:\($0)?latency=20000" }, options: quickTimeouts), quickTimeouts
        ),
        (
            TransportUnderTest(
                name: "MPEG-TS/UDP", socket: udp, playerURL: { "udp://127.0.0.1:\($0)" },
                publisherURL: { "udp://127.0.0.1:\($0)" }, options: quickTimeouts), quickTimeouts
        ),
        (
            TransportUnderTest(
                name: "RTSP/TCP", socket: tcp, playerURL: { "rtsp://127.0.0.1:\($0)/live" },
                publisherURL: { "rtsp://127.0.0.1:\($0)/live" }, options: listening), quickTimeouts
        ),
        (
            TransportUnderTest(
                name: "RTSP/UDP", socket: tcp, playerURL: { "rtsp://127.0.0.1:\($0)/live" },
                publisherURL: { "rtsp://127.0.0.1:\($0)/live" }, options: rtspUDP), rtspUDPPublisher
        ),
        (
            TransportUnderTest(
                name: "RTMP", socket: tcp, playerURL: { "rtmp://127.0.0.1:\($0)/live/s" },
                publisherURL: { "rtmp://127.0.0.1:\($0)/live/s" }, options: listening), quickTimeouts
        ),
    ]
    for (transport, publisherOptions) in transports {
        do {
            let latencies = try measure(transport, publisherOptions: publisherOptions, samples: stream.samples)
            for (label, p) in [("p50", 50.0), ("p95", 95.0)] {
                report.add(
                    Figure(
                        name: "transport \(transport.name) loopback latency \(label)",
                        ours: percentile(latencies, p), reference: nil, referenceName: nil, unit: "ms",
                        higherIsBetter: false, target: nil))
            }
            if latencies.count != stream.samples.count - 1 {
                report.notes.append(
                    "transport \(transport.name): \(latencies.count) of \(stream.samples.count) access units arrived")
            }
        } catch {
            report.notes.append("transport \(transport.name) not measured: \(error)")
        }
    }
    report.notes.append("transports: HLS is not measured (a segment is readable only once complete)")
}

private func measure(_ transport: TransportUnderTest, publisherOptions: StreamOptions, samples: [CompressedSample])
    throws -> [Double]
{
    let port = try freeLoopbackPort(type: transport.socket)
    let arrivals = Arrivals()
    let expected = samples.count
    let playerURL = transport.playerURL(port)
    let playerOptions = transport.options
    let receiver = Thread {
        do {
            let player = try StreamPlayer(url: playerURL, options: playerOptions)
            // init returns once the first access unit is in; nextSample hands it out first.
            while try player.nextSample() != nil {
                let now = ContinuousClock.now
                arrivals.state.withLock { $0.times.append(now) }
            }
        } catch {
            arrivals.state.withLock { $0.error = "\(error)" }
        }
        arrivals.state.withLock { $0.done = true }
    }
    receiver.start()
    // Let the receiver bind (a UDP datagram sent before that is lost).
    Thread.sleep(forTimeInterval: 0.3)
    var sent: [ContinuousClock.Instant] = []
    let start = ContinuousClock.now
    var publisher: StreamPublisher? = nil
    for (index, sample) in samples.enumerated() {
        let due = start.advanced(by: .milliseconds(index * 1000 / 30))
        let wait = ContinuousClock.now.duration(to: due)
        if wait > .zero { Thread.sleep(forTimeInterval: seconds(wait)) }
        sent.append(.now)
        // The listener may still be starting: retry the connection briefly.
        var attempts = 0
        while true {
            do throws(MediaError) {
                if publisher == nil {
                    publisher = try StreamPublisher(url: transport.publisherURL(port), options: publisherOptions)
                }
                try publisher!.append(sample)
                break
            } catch {
                guard error.code == .connectionFailed, index == 0, attempts < 20 else { throw error }
                attempts += 1
                publisher = nil
                Thread.sleep(forTimeInterval: 0.1)
                sent[0] = .now
            }
        }
    }
    // Wait for the receiver to take the last one, then close.
    for _ in 0..<200 {
        if arrivals.state.withLock({ $0.times.count >= expected || $0.error != nil }) { break }
        Thread.sleep(forTimeInterval: 0.01)
    }
    try publisher?.finish()
    for _ in 0..<500 {
        if arrivals.state.withLock({ $0.done }) { break }
        Thread.sleep(forTimeInterval: 0.01)
    }
    let (times, error) = arrivals.state.withLock { ($0.times, $0.error) }
    if times.count > expected {
        throw MediaError.backendFailure("\(times.count) access units arrived for \(expected) sent")
    }
    if let error, times.isEmpty { throw MediaError.backendFailure(error) }
    // The first access unit also waited for the connection to be set up;
    // the figures are for the stream once it flows.
    return zip(sent, times).dropFirst().map { seconds($0.duration(to: $1)) * 1000 }
}

/// A loopback port of the socket `type` that was free a moment ago.
func freeLoopbackPort(type: Int32) throws -> Int {
    let fd = socket(AF_INET, type, 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw MediaError.unavailable("no free loopback port") }
    return Int(UInt16(bigEndian: address.sin_port))
}
