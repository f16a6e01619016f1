import CBenchSupport
import FormatConv
import Foundation
import MediaCore
import MediaIO
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

/// The TCP sender's cost per access unit (`codecs demo`, `codecs stream
/// serve`): each sample as an Annex-B gather list written with `sendmsg`
/// (the start codes written over the sample's own lengths, the parameter
/// sets before keyframes as one more range) against what the senders did
/// before, `AnnexBWriter.write(_:)` into a new array and that array sent.
///
/// Both go through the same non-blocking write loop into a local stream
/// socket pair whose other end is read back in the same thread, so the
/// kernel's copies and the reads cost both sides the same. The gather side
/// needs samples whose bytes are their own (the senders take them out of
/// the encoder's array): copies are made before each of its rounds, outside
/// the timing. The bytes read back are compared before timing.
func benchmarkTCPSender(_ stream: CodedStream, rounds: Int, report: Report) throws {
    let pipe = try SenderPipe()
    let count = stream.samples.count

    func gathered(_ samples: inout [CompressedSample]) throws {
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        let placeholder = CompressedSample(
            data: [], formatDescription: stream.description, pts: .zero, dts: .zero, duration: .zero,
            isKeyframe: false)
        for index in samples.indices {
            var sample = placeholder
            swap(&sample, &samples[index])
            let list = try writer.gather(consume sample)
            try list.withBuffers { try pipe.send($0) }
        }
    }
    func copied() throws {
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        for sample in stream.samples {
            let bytes = try writer.write(sample)
            try bytes.withUnsafeBytes { bytes in
                try withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: 1) { buffers in
                    buffers[0] = bytes
                    try pipe.send(UnsafeBufferPointer(buffers))
                }
            }
        }
    }
    func ownCopies() -> [CompressedSample] {
        stream.samples.map { sample in
            var copy = sample
            copy.data = distinctCopy(sample.data)
            return copy
        }
    }

    // The same bytes on the wire, and the allocations of one pass each (the
    // bytes read back go into storage reserved beforehand).
    pipe.received.reserveCapacity(2 * stream.annexB.count + (1 << 20))
    var samples = ownCopies()
    pipe.received.removeAll(keepingCapacity: true)
    let gatherAllocations = try allocations { try gathered(&samples) }
    let gatheredBytes = pipe.received
    pipe.received.removeAll(keepingCapacity: true)
    let copyAllocations = try allocations { try copied() }
    if gatheredBytes != pipe.received {
        report.notes.append("\(stream.label) TCP sender: the gathered bytes differ from the copied ones")
    }
    pipe.keepsReceivedBytes = false

    var bestGathered = Double.infinity
    var bestCopied = Double.infinity
    for _ in 0..<max(3, rounds * 3) {
        bestCopied = min(bestCopied, try fastest(1) { try copied() })
        samples = ownCopies()
        bestGathered = min(bestGathered, try fastest(1) { try gathered(&samples) })
    }
    let label = stream.label
    report.add(
        Figure(
            name: "\(label) TCP sender per access unit (gather list, sendmsg)",
            ours: bestGathered / Double(count) * 1e6,
            reference: bestCopied / Double(count) * 1e6, referenceName: "write(_:) into a new array, then send",
            unit: "µs/unit", higherIsBetter: false, target: nil))
    report.add(
        Figure(
            name: "\(label) TCP sender heap allocations per access unit", ours: gatherAllocations / Double(count),
            reference: copyAllocations / Double(count), referenceName: "write(_:) into a new array, then send",
            unit: "allocs/unit", higherIsBetter: false, target: nil))
}

/// A local stream socket pair, both ends non-blocking: ``send(_:)`` writes
/// what the sending end takes and reads the other end whenever it is full,
/// so one thread can push any amount through.
private final class SenderPipe {
    let sender: Int32
    let receiver: Int32
    var received: [UInt8] = []
    var keepsReceivedBytes = true
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)

    init() throws {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
            throw MediaError(.system, "socketpair failed")
        }
        sender = pair[0]
        receiver = pair[1]
        for descriptor in pair { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) }
    }

    deinit {
        _ = close(sender)
        _ = close(receiver)
    }

    func send(_ buffers: UnsafeBufferPointer<UnsafeRawBufferPointer>) throws {
        let total = buffers.reduce(0) { $0 + $1.count }
        var offset = 0
        while offset < total {
            offset += try GatheredWrite.writeAvailable(buffers, from: offset, to: sender, peer: "socket pair")
            drain()
        }
    }

    /// Reads everything waiting at the receiving end.
    private func drain() {
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(receiver, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            if keepsReceivedBytes { received += chunk[..<count] }
        }
    }
}
