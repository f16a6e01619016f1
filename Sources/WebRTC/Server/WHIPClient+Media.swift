import FormatConv
import MediaCore
import RTPPayload

// Media: access units out through the sender session, its feedback and
// packets, and the end of the stream (BYE, close_notify, DELETE).
extension WHIPClient {
    func handle(_ events: [RTPSenderEvent]) {
        guard let selected, let outbound else { return }
        for event in events {
            switch event {
            case .rtp(let packet):
                if let protected = try? outbound.protectRTP(packet) { sendDatagram(protected, to: selected) }
            case .rtcp(let packet):
                if let protected = try? outbound.protectRTCP(packet) { sendDatagram(protected, to: selected) }
            case .keyframeRequested: keyframeWanted = true
            case .targetBitRate, .receiverLeft: break
            }
        }
    }

    /// Sends one access unit (after ``connect(timeoutSeconds:)``).
    public func send(_ sample: CompressedSample) throws(MediaError) {
        guard isConnected, sender != nil else { throw MediaError(.unavailable, "WHIP publisher is not connected") }
        handle(try sender!.send(sample, at: clock.now))
    }

    /// True once since the last call when the endpoint asked for a keyframe.
    public func takeKeyframeRequest() -> Bool {
        defer { keyframeWanted = false }
        return keyframeWanted
    }

    /// Ends the media (the last packet again, a sender report, BYE); NACKs
    /// are still answered by ``poll(timeoutMilliseconds:)`` until
    /// ``finish()``.
    public func endStream() {
        if isConnected, sender != nil, !sender!.isFinished { handle(sender!.finish(at: clock.now)) }
    }

    /// Ends the stream: BYE (unless ``endStream()`` said it), DTLS
    /// close_notify, then DELETE of the session. Returns the DELETE's status
    /// (nil without a session URL).
    @discardableResult
    public func finish() throws(MediaError) -> Int? {
        endStream()
        if isConnected, let selected {
            for datagram in dtls?.close() ?? [] { sendDatagram(datagram, to: selected) }
        }
        guard let location else { return nil }
        return try request(method: "DELETE", target: location).status
    }
}
