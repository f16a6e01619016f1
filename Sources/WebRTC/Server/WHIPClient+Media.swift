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
            case .receiverLeft(_, let reason): endpointEnded = "RTCP BYE" + (reason.map { ": \($0)" } ?? "")
            case .targetBitRate: break
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

    /// How ``finish()`` ended the session.
    public enum Ending: Sendable, Hashable, CustomStringConvertible {
        /// The endpoint answered the DELETE with this status.
        case deleted(status: Int)
        /// The endpoint no longer listens (its connection was refused): it
        /// had ended the session itself, as an endpoint that stops at the
        /// publisher's BYE does.
        case endpointClosed
        /// The endpoint gave no session URL, so there was nothing to DELETE.
        case noSessionURL

        /// `DELETE answered 200`, ...
        public var description: String {
            switch self {
            case .deleted(let status): "DELETE answered \(status)"
            case .endpointClosed: "the endpoint had already closed (it refused the DELETE's connection)"
            case .noSessionURL: "no session URL to DELETE"
            }
        }
    }

    /// Ends the stream: BYE (unless ``endStream()`` said it), DTLS
    /// close_notify, then DELETE of the session (with the token when the
    /// session URL has the token's origin).
    ///
    /// - Throws: a 401 as "the endpoint refused the token (401)"; a DELETE
    ///   that got no answer (`.timedOut`, `.invalidData`). A refused
    ///   connection is ``Ending/endpointClosed``, not an error: the media
    ///   was complete.
    @discardableResult
    public func finish() throws(MediaError) -> Ending {
        endStream()
        if isConnected, let selected {
            for datagram in dtls?.close() ?? [] { sendDatagram(datagram, to: selected) }
        }
        guard let session else { return .noSessionURL }
        do throws(MediaError) {
            let (response, answeredBy) = try request(method: "DELETE", url: session)
            if response.status == 401 { throw unauthorized("DELETE", at: answeredBy) }
            return .deleted(status: response.status)
        } catch {
            guard error.code == .connectionFailed else { throw error }
            return .endpointClosed
        }
    }
}
