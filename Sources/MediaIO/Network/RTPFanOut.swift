import FormatConv
import MediaCore
import RTPPayload
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

/// One RTP stream to many receivers from one UDP socket: each sample is
/// packetized once, and every packet goes to every destination, many
/// datagrams per system call (`sendmmsg`). Where the kernel segments UDP
/// (`UDP_SEGMENT`, Linux 4.18 and later, checked when the sender opens),
/// a run of equal-sized packets of an access unit goes to each destination
/// as one message that the kernel cuts into the packets.
///
/// ```swift
/// let fanOut = try RTPFanOutSender(
///     configuration: .init(codec: .h264, ssrc: 0x1234),
///     destinations: [try UDPSocket.Address(host: "127.0.0.1", port: 5004), try UDPSocket.Address(host: "::1", port: 5004)])
/// for sample in samples { try fanOut.send(sample) }
/// ```
///
/// Every destination receives the same packets (one SSRC, one sequence
/// numbering), in the order a single `RTPPacketizer` makes them. RTP only:
/// the sender writes no RTCP and reads none, so there are no sender
/// reports, retransmissions or keyframe requests; receivers take the
/// stream as it comes. Used from one thread.
public final class RTPFanOutSender {
    /// What the sender has done.
    public struct Statistics: Sendable, Hashable {
        /// Samples sent.
        public var samples = 0
        /// RTP packets made; each went to every destination.
        public var packets = 0
        /// Datagrams handed to the kernel, over all destinations.
        public var datagrams = 0
        /// Bytes of those datagrams.
        public var bytes = 0
        /// `sendmmsg` (or `sendmsg`) calls.
        public var systemCalls = 0
        /// Messages the kernel cut into several datagrams.
        public var segmentedMessages = 0
    }

    private let socket: UDPSocket
    private var packetizer: RTPPacketizer
    private var batch = RTPPacketBatch()
    /// The destinations, in the order each packet goes to them.
    public private(set) var destinations: [UDPSocket.Address]
    /// Whether runs of packets go as segmented messages (UDP GSO).
    public let usesSegmentation: Bool
    /// What was sent so far: samples, packets, datagrams, bytes and system calls.
    public private(set) var statistics = Statistics()

    /// Opens a UDP socket on `host` (port 0) for the stream.
    ///
    /// - Parameters:
    ///   - configuration: the packetizer's settings (codec, SSRC, payload
    ///     type, packet size).
    ///   - destinations: where every packet goes; ``add(_:)`` and
    ///     ``remove(_:)`` change them between samples.
    ///   - host: the local address to send from (`127.0.0.1`, `0.0.0.0`, `::1`).
    ///   - segmentation: use UDP segmentation offload when the kernel has
    ///     it (it is tried once, on this socket, to itself); `false` sends
    ///     every datagram as its own message.
    public init(
        configuration: RTPPacketizer.Configuration, destinations: [UDPSocket.Address] = [],
        bindingTo host: String = "127.0.0.1", segmentation: Bool = true
    ) throws(MediaError) {
        socket = try UDPSocket(bindingTo: host, port: 0, receiveBufferSize: 64 << 10)
        packetizer = RTPPacketizer(configuration: configuration)
        self.destinations = destinations
        usesSegmentation = segmentation && Self.segmentationWorks(on: socket)
    }

    /// The address the stream leaves from.
    public var localAddress: UDPSocket.Address { socket.localAddress }

    /// Adds a destination (from the next sample on); one already there is
    /// not added twice.
    public func add(_ destination: UDPSocket.Address) {
        if !destinations.contains(destination) { destinations.append(destination) }
    }

    /// Removes a destination (from the next sample on).
    public func remove(_ destination: UDPSocket.Address) {
        destinations.removeAll { $0 == destination }
    }

    /// Packetizes `sample` and sends every packet to every destination.
    ///
    /// - Throws: `MediaError` from the packetizer, or
    ///   `MediaError.Code.system` naming a destination the kernel refused
    ///   (the datagrams before it have gone).
    public func send(_ sample: CompressedSample) throws(MediaError) {
        batch.removeAll()
        try packetizer.packetize(sample, into: &batch)
        statistics.samples += 1
        statistics.packets += batch.count
        guard !destinations.isEmpty, !batch.isEmpty else { return }
        let names = destinations.map(UDPSocket.SocketName.init)
        let runs = usesSegmentation ? Self.runs(of: batch.ranges) : batch.ranges.map { ($0, 0) }
        var failure: MediaError?
        let calls = batch.bytes.withUnsafeBytes { bytes -> Int in
            var payloads: [(UnsafeRawBufferPointer, Int)] = []
            payloads.reserveCapacity(runs.count)
            for (range, segment) in runs {
                let run = UnsafeRawBufferPointer(rebasing: bytes[range])
                if segment > 0 {
                    payloads += UDPSocket.segmentRuns(run, segmentSize: segment)
                } else {
                    payloads.append((run, 0))
                }
            }
            statistics.segmentedMessages += payloads.count(where: { $0.1 > 0 }) * names.count
            do throws(MediaError) {
                return try socket.sendMessages(payloads, to: names)
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        statistics.systemCalls += calls
        statistics.datagrams += batch.count * destinations.count
        statistics.bytes += batch.bytes.count * destinations.count
    }

    /// Closes the socket.
    public func close() { socket.close() }

    /// The packets as runs the kernel can cut: consecutive packets of one
    /// size, the last of a run possibly shorter (a run of one is sent as a
    /// plain datagram, segment size 0). The ranges lie back to back in the
    /// batch's bytes.
    static func runs(of ranges: [Range<Int>]) -> [(Range<Int>, Int)] {
        var runs: [(Range<Int>, Int)] = []
        var index = 0
        while index < ranges.count {
            let size = ranges[index].count
            var end = index + 1
            while end < ranges.count, end - index < UDPSocket.maximumSegments,
                ranges[end].lowerBound == ranges[end - 1].upperBound, ranges[end].count <= size
            {
                end += 1
                if ranges[end - 1].count < size { break }
            }
            let span = ranges[index].lowerBound..<ranges[end - 1].upperBound
            runs.append((span, end - index > 1 ? size : 0))
            index = end
        }
        return runs
    }

    /// Sends two 1-byte segments from `socket` to itself and reads them
    /// back: true when both arrive as datagrams of their own.
    private static func segmentationWorks(on socket: UDPSocket) -> Bool {
        guard socket.supportsSegmentation else { return false }
        let probe: [UInt8] = [0x5A, 0xA5]
        var own = socket.localAddress
        if own.host == "0.0.0.0" { own = UDPSocket.Address(numericHost: "127.0.0.1", port: own.port) }
        if own.host == "::" { own = UDPSocket.Address(numericHost: "::1", port: own.port) }
        let sent = probe.withUnsafeBytes { bytes in
            (try? socket.sendMessages([(bytes, 1)], to: [UDPSocket.SocketName(own)])) != nil
        }
        guard sent else { return false }
        var received: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 16)
        while received.count < 2, let (count, _) = try? socket.receive(into: &buffer, timeout: .milliseconds(200)) {
            received.append(Array(buffer[..<count]))
        }
        return received == [[0x5A], [0xA5]]
    }
}
