import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import RTPPayload
import Sockets
import TestSupport
import Testing

/// Reads `count` datagrams from `socket` (5 s each at most), then checks
/// that nothing more arrives within `settle`.
private func drain(_ socket: UDPSocket, count: Int, settle: Duration = .milliseconds(100)) throws -> [[UInt8]] {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var datagrams: [[UInt8]] = []
    while datagrams.count < count, let (size, _) = try socket.receive(into: &buffer, timeout: .seconds(5)) {
        datagrams.append(Array(buffer[..<size]))
    }
    if try socket.receive(into: &buffer, timeout: settle) != nil {
        datagrams.append([])  // one more than sent: the caller's count check fails
    }
    return datagrams
}

/// A byte pattern that differs from datagram to datagram and along each one.
private func pattern(_ size: Int, seed: Int) -> [UInt8] {
    (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7 &+ ($0 >> 8)) }
}

/// `UDPSocket.send(_:toEach:)` (`sendmmsg`) and `sendSegmented` (UDP GSO):
/// every destination gets every datagram, byte for byte, in order.
struct UDPSocketBatchTests {
    @Test(arguments: ["127.0.0.1", "::1"])
    func everyDatagramReachesEveryDestination(_ host: String) throws {
        let receivers = try (0..<5).map { _ in try UDPSocket(bindingTo: host) }
        let sender = try UDPSocket(bindingTo: host)
        let datagrams = [1, 100, 1200, 1200, 37, 1400, 9000].enumerated().map { pattern($1, seed: $0) }
        let calls = try withBuffers(datagrams) { buffers in
            try sender.send(buffers, toEach: receivers.map(\.localAddress))
        }
        #expect(calls == 1)  // 35 messages fit one sendmmsg
        for receiver in receivers { #expect(try drain(receiver, count: datagrams.count) == datagrams) }
    }

    @Test func moreThan1024MessagesTakeSeveralCalls() throws {
        let receivers = try (0..<350).map { _ in try UDPSocket(receiveBufferSize: 16 << 10) }
        let sender = try UDPSocket()
        let datagrams = (0..<3).map { pattern(20, seed: $0) }
        let calls = try withBuffers(datagrams) { buffers in
            try sender.send(buffers, toEach: receivers.map(\.localAddress))
        }
        #expect(calls == 2)  // 1 050 messages: 1 024, then 26
        // Loopback delivers within the send call; a datagram too many would be
        // queued already.
        for receiver in receivers { #expect(try drain(receiver, count: 3, settle: .zero) == datagrams) }
    }

    @Test func segmentedPayloadArrivesAsSeparateDatagrams() throws {
        let sender = try UDPSocket()
        // A kernel without UDP_SEGMENT (before Linux 4.18) cannot run this.
        guard sender.supportsSegmentation else { return }
        let receivers = try (0..<3).map { _ in try UDPSocket() }
        let payload = pattern(3500, seed: 3)
        let calls = try payload.withUnsafeBytes { bytes in
            try sender.sendSegmented(bytes, segmentSize: 1000, toEach: receivers.map(\.localAddress))
        }
        #expect(calls == 1)
        let expected = [payload[0..<1000], payload[1000..<2000], payload[2000..<3000], payload[3000...]].map(Array.init)
        for receiver in receivers { #expect(try drain(receiver, count: 4) == expected) }
    }

    @Test func segmentedPayloadOverTheSegmentLimitIsSplit() throws {
        let sender = try UDPSocket()
        guard sender.supportsSegmentation else { return }
        let receiver = try UDPSocket()
        let payload = pattern(100 * 100, seed: 5)
        _ = try payload.withUnsafeBytes { bytes in
            try sender.sendSegmented(bytes, segmentSize: 100, toEach: [receiver.localAddress])
        }
        let expected = (0..<100).map { Array(payload[$0 * 100..<($0 + 1) * 100]) }
        #expect(try drain(receiver, count: 100) == expected)
        for size in [0, 65_001] {
            #expect(throws: MediaError.self) {
                try payload.withUnsafeBytes { bytes in
                    try sender.sendSegmented(bytes, segmentSize: size, toEach: [receiver.localAddress])
                }
            }
        }
    }

    /// Calls `body` with each array's bytes.
    private func withBuffers<R>(_ arrays: [[UInt8]], _ body: ([UnsafeRawBufferPointer]) throws -> R) throws -> R {
        var pointers: [UnsafeMutableRawBufferPointer] = []
        defer { for pointer in pointers { pointer.deallocate() } }
        for array in arrays {
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(array.count, 1), alignment: 1)
            array.withUnsafeBytes { copy.copyMemory(from: $0) }
            pointers.append(copy)
        }
        return try body(zip(pointers, arrays).map { UnsafeRawBufferPointer(rebasing: $0[0..<$1.count]) })
    }
}

/// `RTPFanOutSender`: each destination receives exactly the packets a
/// separate `RTPPacketizer` with the same configuration makes, in order,
/// with and without UDP segmentation.
struct RTPFanOutSenderTests {
    @Test(arguments: [true, false])
    func everyReceiverGetsThePacketizersPackets(segmentation: Bool) throws {
        var properties = CompressionProperties()
        properties.preset = "ultrafast"
        properties.realTime = true
        properties.constantQP = 10  // large access units: many fragments of one size
        let session = try CompressionSession(
            width: 320, height: 240, codec: .h264, encoder: .software, properties: properties)
        let samples = try encodeClip(session, count: 6)
        let configuration = RTPPacketizer.Configuration(
            codec: .h264, ssrc: 0x0102_0304, initialSequenceNumber: 65_530, timestampOffset: 77)
        var packetizer = RTPPacketizer(configuration: configuration)
        var expected: [[UInt8]] = []
        var firstCount = 0
        for sample in samples {
            var batch = RTPPacketBatch()
            try packetizer.packetize(sample, into: &batch)
            expected += batch.packets
            if firstCount == 0 { firstCount = batch.count }
        }
        #expect(expected.count > samples.count)  // fragments, not one packet per sample

        let receivers = try (0..<12).map { _ in try UDPSocket() }
        let fanOut = try RTPFanOutSender(
            configuration: configuration, destinations: receivers.dropLast().map(\.localAddress),
            segmentation: segmentation)
        fanOut.add(receivers.last!.localAddress)
        fanOut.add(receivers[0].localAddress)  // already there: not added twice
        #expect(fanOut.destinations.count == 12)
        if !segmentation { #expect(!fanOut.usesSegmentation) }
        for sample in samples { try fanOut.send(sample) }
        for receiver in receivers { #expect(try drain(receiver, count: expected.count) == expected) }
        let statistics = fanOut.statistics
        #expect(statistics.samples == samples.count)
        #expect(statistics.packets == expected.count)
        #expect(statistics.datagrams == expected.count * 12)
        #expect(statistics.bytes == expected.reduce(0) { $0 + $1.count } * 12)
        #expect(statistics.systemCalls == samples.count)  // each access unit's messages fit one call
        #expect((statistics.segmentedMessages > 0) == fanOut.usesSegmentation)

        // A removed destination gets nothing more.
        fanOut.remove(receivers[3].localAddress)
        try fanOut.send(samples[0])
        #expect(try drain(receivers[3], count: 0).isEmpty)
        #expect(try drain(receivers[4], count: firstCount).count == firstCount)
    }
}
