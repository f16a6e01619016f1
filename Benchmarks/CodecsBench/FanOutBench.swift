import DecodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO
import RTPPayload
import Sockets
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One fan-out run's figures.
struct FanOutRun {
    var receivers: Int
    /// Sending-thread CPU over the run's wall time (cores).
    var cores: Double
    /// Reference: one `sendmsg` per datagram, same packets, same receivers.
    var referenceCores: Double
    /// `sendmmsg` without UDP segmentation.
    var unsegmentedCores: Double
    var datagramsExpected: Int
    var datagramsIntact: Int
    var systemCalls: Int
}

/// What the receiving thread counted.
private final class FanOutReceipts: Sendable {
    struct State {
        var intact: [Int]
        var wrong = 0
        /// The datagrams of the sampled receivers, in arrival order.
        var kept: [Int: [[UInt8]]] = [:]
        var stop = false
        var done = false
    }
    let state: Mutex<State>
    init(receivers: Int) { state = Mutex(State(intact: Array(repeating: 0, count: receivers))) }
}

/// Fan-out: one 720p30 x264 ultrafast 2 Mbit/s CBR stream sent by one
/// ``RTPFanOutSender`` (one socket, `sendmmsg`, UDP GSO where the kernel has
/// it) to M receivers on the loopback, against the same packets sent with
/// one `sendmsg` per datagram (`UDPSocket.send`) in the same run. The
/// figure is the sending thread's CPU (packetizing and sending, including
/// the loopback delivery the kernel does in that thread) over the run's
/// wall time. Every receiver checks every datagram byte for byte against
/// the packets made by a separate `RTPPacketizer`; three of the largest
/// run's receivers are depacketized and decoded after the run, their
/// pictures' MD5 compared frame by frame with `ffmpeg -f framemd5` of the
/// stream.
func benchmarkFanOut(_ frames: [PixelBuffer], counts: [Int], report: Report, log: (String) -> Void) throws
    -> [FanOutRun]
{
    let stream = try encodeStream(
        frames, codec: .h264, settings: liveSettings(preset: "ultrafast", bitRate: 2_000_000), label: "x264 2 Mbit/s")
    let configuration = RTPPacketizer.Configuration(
        codec: .h264, ssrc: 0xFA17_0001, initialSequenceNumber: 1000, timestampOffset: 0)
    var packetizer = RTPPacketizer(configuration: configuration)
    var expected: [[UInt8]] = []
    for sample in stream.samples {
        var batch = RTPPacketBatch()
        try packetizer.packetize(sample, into: &batch)
        expected += batch.packets
    }
    var runs: [FanOutRun] = []
    for (position, count) in counts.enumerated() {
        let checks = position == counts.count - 1
        log("fan-out: \(count) receivers, RTPFanOutSender then one sendmsg per datagram")
        let ours = try fanOut(
            stream.samples, receivers: count, configuration: configuration, expected: expected, mode: .segmented,
            keeping: checks ? Set([0, count / 2, count - 1]) : Set<Int>())
        let unsegmented = try fanOut(
            stream.samples, receivers: count, configuration: configuration, expected: expected, mode: .batched,
            keeping: [])
        let reference = try fanOut(
            stream.samples, receivers: count, configuration: configuration, expected: expected, mode: .perDatagram,
            keeping: [])
        runs.append(
            FanOutRun(
                receivers: count, cores: ours.cores, referenceCores: reference.cores,
                unsegmentedCores: unsegmented.cores,
                datagramsExpected: expected.count * count, datagramsIntact: ours.intact, systemCalls: ours.calls))
        let name = count == 200 ? "fan-out 200 receivers CPU (cores)" : "fan-out \(count) receivers CPU (cores)"
        report.add(
            Figure(
                name: name + ", 720p30 2 Mbit/s", ours: ours.cores, reference: reference.cores,
                referenceName: "one sendmsg per datagram", unit: "cores", higherIsBetter: false,
                target: count == 200 ? "≤ 0.5" : nil))
        report.notes.append(
            "fan-out \(count): \(ours.intact) of \(expected.count * count) datagrams arrived intact "
                + "(sendmmsg alone: \(unsegmented.intact), per datagram: \(reference.intact)); \(ours.calls) system "
                + "calls for \(stream.samples.count) access units; segmentation \(ours.segmented ? "on" : "off"); "
                + String(format: "sendmmsg without segmentation %.3f cores", unsegmented.cores))
        if checks {
            let verdict = try checkDecodes(ours.kept, stream: stream)
            report.notes.append("fan-out \(count): \(verdict)")
        }
    }
    return runs
}

/// How a fan-out run sends.
private enum FanOutMode {
    /// `RTPFanOutSender` with UDP segmentation where the kernel has it.
    case segmented
    /// `RTPFanOutSender`, `sendmmsg` only.
    case batched
    /// The packetizer, then `UDPSocket.send` per packet per receiver.
    case perDatagram
}

/// One run: the samples paced at 30 a second to `receivers` sockets.
private func fanOut(
    _ samples: [CompressedSample], receivers: Int, configuration: RTPPacketizer.Configuration,
    expected: [[UInt8]], mode: FanOutMode, keeping: Set<Int>
) throws -> (cores: Double, intact: Int, calls: Int, segmented: Bool, kept: [Int: [[UInt8]]]) {
    var descriptors: [Int32] = []
    var destinations: [UDPSocket.Address] = []
    defer { for descriptor in descriptors { close(descriptor) } }
    for _ in 0..<receivers {
        let (descriptor, port) = try openReceiver()
        descriptors.append(descriptor)
        destinations.append(try UDPSocket.Address(host: "127.0.0.1", port: port))
    }
    let receipts = FanOutReceipts(receivers: receivers)
    let firstSequence = Int(configuration.initialSequenceNumber)
    let watched = descriptors
    Thread {
        receive(watched, receipts: receipts, expected: expected, firstSequence: firstSequence, keeping: keeping)
    }.start()

    let perDatagram = mode == .perDatagram
    let fanOut =
        perDatagram
        ? nil
        : try RTPFanOutSender(
            configuration: configuration, destinations: destinations, segmentation: mode == .segmented)
    let plain = perDatagram ? try UDPSocket(bindingTo: "127.0.0.1", receiveBufferSize: 64 << 10) : nil
    var packetizer = RTPPacketizer(configuration: configuration)
    var batch = RTPPacketBatch()
    var cpu = 0.0
    let start = monotonicNow() + 0.05
    for (index, sample) in samples.enumerated() {
        sleepUntil(start + Double(index) / liveFrameRate)
        let before = threadCPUSeconds()
        if let fanOut {
            try fanOut.send(sample)
        } else if let plain {
            batch.removeAll()
            try packetizer.packetize(sample, into: &batch)
            for packet in batch { for destination in destinations { try plain.send(packet, to: destination) } }
        }
        cpu += threadCPUSeconds() - before
    }
    let wall = Double(samples.count) / liveFrameRate
    // The receiving thread drains what is still queued, then stops.
    usleep(300_000)
    receipts.state.withLock { $0.stop = true }
    while !receipts.state.withLock({ $0.done }) { usleep(10_000) }
    let state = receipts.state.withLock { $0 }
    if state.wrong > 0 {
        FileHandle.standardError.write(Data("codecs-bench: fan-out: \(state.wrong) datagrams differed\n".utf8))
    }
    return (
        cpu / wall, state.intact.reduce(0, +), fanOut?.statistics.systemCalls ?? expected.count * receivers,
        fanOut?.usesSegmentation ?? false, state.kept
    )
}

/// A UDP socket on the loopback, port 0, for a counting receiver.
private func openReceiver() throws -> (Int32, UInt16) {
    let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard descriptor >= 0 else { throw MediaError(.system, "socket: errno \(errno)") }
    var size: Int32 = 1 << 20
    _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
        }
    }
    guard bound else {
        close(descriptor)
        throw MediaError(.system, "bind: errno \(errno)")
    }
    return (descriptor, UInt16(bigEndian: address.sin_port))
}

/// The receiving thread: polls every socket, reads every datagram and
/// checks it byte for byte against the packet with its sequence number.
private func receive(
    _ descriptors: [Int32], receipts: FanOutReceipts, expected: [[UInt8]], firstSequence: Int, keeping: Set<Int>
) {
    var polls = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    var buffer = [UInt8](repeating: 0, count: 2048)
    var intact = [Int](repeating: 0, count: descriptors.count)
    var wrong = 0
    var kept: [Int: [[UInt8]]] = [:]
    var stopping = false
    while true {
        let ready = poll(&polls, nfds_t(polls.count), 20)
        if ready <= 0 {
            if stopping { break }
            stopping = receipts.state.withLock { $0.stop }
            continue
        }
        for index in polls.indices where polls[index].revents & Int16(POLLIN) != 0 {
            while true {
                let count = buffer.withUnsafeMutableBytes {
                    recv(polls[index].fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                }
                if count <= 0 { break }
                let sequence = Int(buffer[2]) << 8 | Int(buffer[3])
                let position = (sequence - firstSequence) & 0xFFFF
                if count >= 12, position < expected.count, expected[position].elementsEqual(buffer[..<count]) {
                    intact[index] += 1
                } else {
                    wrong += 1
                }
                if keeping.contains(index) { kept[index, default: []].append(Array(buffer[..<count])) }
            }
        }
    }
    receipts.state.withLock { state in
        state.intact = intact
        state.wrong = wrong
        state.kept = kept
        state.done = true
    }
}

/// Depacketizes and decodes each kept receiver's datagrams and compares
/// the pictures' MD5s, frame by frame, with `ffmpeg -f framemd5` of the
/// stream as Annex-B.
private func checkDecodes(_ kept: [Int: [[UInt8]]], stream: CodedStream) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("codecs-bench-fanout-\(getpid()).h264")
        .path
    try Data(stream.annexB).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    process.arguments = [
        "-hide_banner", "-loglevel", "error", "-nostdin", "-f", "h264", "-i", path, "-fps_mode", "passthrough", "-f",
        "framemd5", "-",
    ]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let reference = String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { line -> String? in
        guard !line.hasPrefix("#"), let hash = line.split(separator: ",").last?.trimmingCharacters(in: .whitespaces),
            hash.count == 32
        else { return nil }
        return hash
    }
    var verdicts: [String] = []
    for receiver in kept.keys.sorted() {
        var depacketizer = RTPDepacketizer(codec: .h264)
        var decoder: DecompressionSession?
        var hashes: [String] = []
        func decode(_ outputs: [RTPDepacketizerOutput]) throws {
            for case .sample(let sample) in outputs {
                if decoder == nil {
                    decoder = try DecompressionSession(
                        formatDescription: sample.formatDescription, decoder: .software, threadCount: 1)
                }
                hashes += try decoder!.decode(sample).map { hexMD5($0.pixelBuffer.packedBytes()) }
            }
        }
        for datagram in kept[receiver] ?? [] { try decode(depacketizer.receive(datagram)) }
        try decode(depacketizer.finish())
        if let decoder { hashes += try decoder.finish().map { hexMD5($0.pixelBuffer.packedBytes()) } }
        let same = hashes == reference
        verdicts.append(
            "receiver \(receiver) decoded \(hashes.count) frames, "
                + (same
                    ? "every MD5 equal to ffmpeg's framemd5"
                    : "MD5s DIFFER from ffmpeg's framemd5 (\(reference.count))"))
    }
    return verdicts.joined(separator: "; ")
}

/// MD5 as 32 lowercase hexadecimal digits.
private func hexMD5(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(MD5.digest(bytes).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
}
