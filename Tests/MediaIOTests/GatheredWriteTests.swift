import EncodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO
import Sockets
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The TCP senders' gather path (`AnnexBWriter.gather` → `GatheredWrite` →
/// `sendmsg`) puts exactly the bytes of the copying path (`AnnexBWriter.write`)
/// on a stream socket, for a real x264 stream: whole sends, and non-blocking
/// sends cut short by a small socket buffer whose rest is queued, as
/// `codecs stream serve` does for a slow client.
@Suite(.serialized) struct GatheredWriteTests {
    /// An x264 stream with a keyframe every 8 frames (parameter sets inserted
    /// before each), as 4-byte and as 2-byte length-prefixed samples (the
    /// in-place shape and the alternating start-code shape of the list).
    static func x264Samples(lengthSize: Int) throws -> [CompressedSample] {
        var properties = CompressionProperties()
        properties.maxKeyFrameInterval = 8
        let session = try CompressionSession(
            width: 320, height: 240, codec: .h264, encoder: .software, properties: properties)
        defer { session.invalidate() }
        let samples = try encodeClip(session, count: 20)
        guard lengthSize != 4 else { return samples }
        let source = samples[0].formatDescription
        let description = try FormatDescription(
            h264ParameterSets: source.parameterSets, nalUnitHeaderLength: lengthSize)
        return samples.map { sample in
            var converted = sample
            converted.formatDescription = description
            converted.data = Self.relength(sample.data, to: lengthSize)
            return converted
        }
    }

    /// 4-byte length-prefixed NAL units rewritten with `size`-byte lengths.
    static func relength(_ data: [UInt8], to size: Int) -> [UInt8] {
        var output: [UInt8] = []
        var offset = 0
        while offset < data.count {
            let length = data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            precondition(length < 1 << (8 * size), "NAL unit of \(length) bytes too long for \(size)-byte lengths")
            for shift in stride(from: 8 * (size - 1), through: 0, by: -8) {
                output.append(UInt8(truncatingIfNeeded: length >> shift))
            }
            output += data[offset + 4..<offset + 4 + length]
            offset += 4 + length
        }
        return output
    }

    /// The copying path's bytes: every sample through `write(_:)`.
    static func copiedStream(_ samples: [CompressedSample]) throws -> [UInt8] {
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        var stream: [UInt8] = []
        for sample in samples { stream += try writer.write(sample) }
        return stream
    }

    /// A connected stream socket pair whose sending end has a small buffer
    /// (so sends are cut short), and a thread reading the other end to EOF.
    final class Pipe: @unchecked Sendable {
        let sender: Int32
        private let receiver: Int32
        private let received = Mutex<[UInt8]>([])
        private let done = DispatchSemaphore(value: 0)

        init() throws {
            var pair: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
                throw MediaError(.system, "socketpair failed")
            }
            sender = pair[0]
            receiver = pair[1]
            var size: Int32 = 4096
            _ = setsockopt(sender, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            Thread { [self] in
                var chunk = [UInt8](repeating: 0, count: 1500)
                while true {
                    let count = chunk.withUnsafeMutableBytes { recv(receiver, $0.baseAddress, $0.count, 0) }
                    if count <= 0 { break }
                    received.withLock { $0 += chunk[..<count] }
                    usleep(50)  // a reader slower than the writer
                }
                done.signal()
            }.start()
        }

        /// Closes the sending end and returns everything the reader got.
        func finish() -> [UInt8] {
            _ = close(sender)
            done.wait()
            _ = close(receiver)
            return received.withLock { $0 }
        }
    }

    /// Each sample taken out of `samples` (so its bytes are its own and the
    /// list rewrites them in place) and turned into its gather list.
    static func gatherLists(_ samples: [CompressedSample]) throws -> [AnnexBGatherList] {
        var samples = samples
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        var lists: [AnnexBGatherList] = []
        while !samples.isEmpty {
            lists.append(try writer.gather(samples.removeFirst()))
        }
        return lists
    }

    @Test(arguments: [4, 2])
    func wholeGatheredSendsCarryTheCopiedBytes(lengthSize: Int) throws {
        let samples = try Self.x264Samples(lengthSize: lengthSize)
        let expected = try Self.copiedStream(samples)
        let pipe = try Pipe()
        for list in try Self.gatherLists(samples) {
            try list.withBuffers { buffers in
                try GatheredWrite.writeAll(buffers, to: pipe.sender, peer: "test")
            }
        }
        let received = pipe.finish()
        #expect(received.count == expected.count)
        #expect(received == expected, "\(lengthSize)-byte lengths: the gathered bytes differ from write(_:)'s")
    }

    /// Non-blocking sends that stop where the socket is full, the rest queued
    /// and sent before the next access unit (the broadcaster's slow-client path).
    @Test(arguments: [4, 2])
    func partialGatheredSendsWithAQueueCarryTheCopiedBytes(lengthSize: Int) throws {
        let samples = try Self.x264Samples(lengthSize: lengthSize)
        let expected = try Self.copiedStream(samples)
        let pipe = try Pipe()
        _ = fcntl(pipe.sender, F_SETFL, fcntl(pipe.sender, F_GETFL) | O_NONBLOCK)
        var queue: [UInt8] = []
        var queueStart = 0
        var queuedSends = 0
        func flushQueue() throws {
            while queueStart < queue.count {
                let sent = try queue[queueStart...].withUnsafeBytes { bytes in
                    try withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: 1) { buffers in
                        buffers[0] = bytes
                        return try GatheredWrite.writeAvailable(
                            UnsafeBufferPointer(buffers), to: pipe.sender, peer: "test")
                    }
                }
                if sent == 0 { break }
                queueStart += sent
            }
        }
        for list in try Self.gatherLists(samples) {
            try list.withBuffers { buffers in
                if queueStart == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    queueStart = 0
                    let sent = try GatheredWrite.writeAvailable(buffers, to: pipe.sender, peer: "test")
                    if sent < list.byteCount {
                        queuedSends += 1
                        GatheredWrite.append(buffers, from: sent, to: &queue)
                    }
                } else {
                    GatheredWrite.append(buffers, from: 0, to: &queue)
                    try flushQueue()
                }
            }
        }
        while queueStart < queue.count {
            var writable = pollfd(fd: pipe.sender, events: Int16(POLLOUT), revents: 0)
            _ = poll(&writable, 1, 1000)
            try flushQueue()
        }
        let received = pipe.finish()
        #expect(queuedSends > 0, "the small socket buffer should have cut some sends short")
        #expect(received == expected, "\(lengthSize)-byte lengths: the gathered bytes differ from write(_:)'s")
    }
}
