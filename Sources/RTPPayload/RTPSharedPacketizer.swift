import FormatConv

/// Packetizes each access unit once for many RTP streams of one source (the viewers of a WHEP server): the
/// payloads of every packet are written once, and each stream takes them with its own header (payload type,
/// SSRC, sequence number, timestamp offset) through
/// ``RTPSenderSession/send(_:sharing:at:)``.
///
/// ```swift
/// let clock = RTPMonotonicClock()
/// var sharing = RTPSharedPacketizer()
/// var senders = [
///     RTPSenderSession(configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x5EED_0001))),
///     RTPSenderSession(configuration: .init(packetizer: .init(codec: .h264, payloadType: 102, ssrc: 0x5EED_0002))),
/// ]
/// for sample in samples {
///     sharing.startAccessUnit()
///     for index in senders.indices {
///         for case .rtp(let datagram) in try senders[index].send(sample, sharing: &sharing, at: clock.now) {
///             socket.send(datagram, to: index)
///         }
///     }
/// }
/// ```
///
/// Streams share when their packetizer configurations are equal but for ``RTPPacketizer/Configuration/payloadType``,
/// ``RTPPacketizer/Configuration/ssrc``, ``RTPPacketizer/Configuration/initialSequenceNumber`` and
/// ``RTPPacketizer/Configuration/timestampOffset``; configurations that differ otherwise (another codec or
/// payload size) are packetized once each. A stream whose payloads depend on its own history packetizes for
/// itself (``shares(_:)`` is false): parameter sets sent at an ``RTPParameterSetPolicy/interval(_:)``, or HEVC
/// with decoding order numbers. A stream that starts at a keyframe (as a WHEP viewer does) gets the packets its
/// own ``RTPPacketizer`` would write, byte for byte.
///
/// Costs: one packetization per access unit and configuration; each stream then copies the packets it takes and
/// writes its 12-byte headers.
public struct RTPSharedPacketizer: Sendable {
    /// One configuration's packetizer and the packets of the current access unit.
    struct Entry: Sendable {
        /// The configuration with the per-stream header fields zeroed.
        var key: RTPPacketizer.Configuration
        var packetizer: RTPPacketizer
        var batch = RTPPacketBatch()
        /// Whether ``batch`` holds the current access unit's packets (or ``failure`` why it could not).
        var isCurrent = false
        var failure: MediaError?

        /// Packetizes `sample` into ``batch`` (emptied first), or notes why it cannot.
        mutating func packetize(_ sample: CompressedSample) -> Bool {
            isCurrent = true
            failure = nil
            batch.removeAll()
            do {
                try packetizer.packetize(sample, into: &batch)
                return true
            } catch {
                failure = error
                return false
            }
        }
    }

    /// The most configurations packetized for; a stream of another one packetizes for itself.
    public static let configurationLimit = 16

    var entries: [Entry] = []
    /// Access units packetized, once per access unit and configuration however many streams take them.
    public private(set) var accessUnitsPacketized = 0
    /// Access units streams took from a packetization made here (counted once per stream).
    public private(set) var accessUnitsTaken = 0

    /// Creates a packetizer that has written nothing.
    public init() {}

    /// Whether a stream configured like `configuration` can take shared packets: false when its payloads depend
    /// on its own history (parameter sets at an interval, HEVC decoding order numbers).
    public static func shares(_ configuration: RTPPacketizer.Configuration) -> Bool {
        if case .interval = configuration.parameterSets { return false }
        return configuration.codec != .hevc || configuration.maximumDONDifference == 0
    }

    /// Forgets the packets of the last access unit: call once before each access unit is handed to the streams.
    public mutating func startAccessUnit() {
        for index in entries.indices { entries[index].isCurrent = false }
    }

    /// The packets of `sample` for streams configured like `stream` (the taking stream's own packetizer), written
    /// at the first call for the access unit and reused by later calls, with payload type, SSRC and sequence
    /// numbers 0 and no timestamp offset; nil when such a stream cannot share (``shares(_:)``, or past
    /// ``configurationLimit``). `stream` takes the shared packetizer's record of the parameter sets last sent, so
    /// that it sends them when it next packetizes for itself as if it had written these packets.
    ///
    /// - Throws: what ``RTPPacketizer/packetize(_:into:)`` throws, at every call for the access unit.
    mutating func packets(of sample: CompressedSample, for stream: inout RTPPacketizer)
        throws(MediaError) -> RTPPacketBatch?
    {
        guard Self.shares(stream.configuration) else { return nil }
        var key = stream.configuration
        key.payloadType = 0
        key.ssrc = 0
        key.initialSequenceNumber = 0
        key.timestampOffset = 0
        var index = entries.firstIndex { $0.key == key }
        if index == nil {
            guard entries.count < Self.configurationLimit else { return nil }
            entries.append(Entry(key: key, packetizer: RTPPacketizer(configuration: key)))
            index = entries.count - 1
        }
        let found = index!
        if !entries[found].isCurrent, entries[found].packetize(sample) { accessUnitsPacketized += 1 }
        if let failure = entries[found].failure { throw failure }
        accessUnitsTaken += 1
        stream.followParameterSets(of: entries[found].packetizer)
        return entries[found].batch
    }
}
