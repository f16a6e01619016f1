import FormatConv
import MediaCore
import RTPPayload

#if canImport(Glibc)
    import Glibc
#endif

// Media: datagrams in and the peer's datagrams out on the one UDP socket,
// access units out, feedback, and the end of the stream (BYE, close_notify,
// DELETE).
extension WHIPClient {
    /// Reads datagrams and hands them to the peer, then runs its timers: the
    /// ICE checks ``checks`` lets out until one succeeds, then consent
    /// checks to the selected pair, DTLS retransmissions and sender reports.
    ///
    /// - Throws: `.unavailable` once consent expired (no response to a
    ///   consent check for ``consentExpiry``): the endpoint is gone, and no
    ///   media is sent to it any more; `.unavailable` too when the endpoint
    ///   ended the session (BYE or DTLS close_notify) before
    ///   ``endStream()``.
    public func poll(timeoutMilliseconds: Int32) throws(MediaError) {
        waitForDatagrams(timeoutMilliseconds: pacedTimeout(timeoutMilliseconds))
        var buffer = [UInt8](repeating: 0, count: 2048)
        for socket in sockets {
            for _ in 0..<256 {
                guard let (datagram, address) = receiveUDPDatagram(on: socket.descriptor, into: &buffer) else { break }
                deliver(datagram, from: address, over: .host)
            }
        }
        try pollRelay()
        guard let peer else { return }
        perform(peer.poll(at: clock.now))
        if peer.consentLost {
            if !stopped {
                CodecLog.log(.warning, subsystem: "whip", "\(endpoint) stopped answering consent checks; media stopped")
            }
            stopped = true
            throw MediaError(
                .unavailable,
                "the WHIP endpoint stopped answering: no response to consent checks for \(consentExpiry) s "
                    + "(RFC 7675); media stopped")
        }
        // The endpoint ending the session before our end of the stream:
        // its BYE or DTLS close_notify (after ours, it is the expected end).
        if isConnected, !peer.sender.isFinished, let reason = peer.remoteEnded {
            stopped = true
            CodecLog.log(.warning, subsystem: "whip", "\(endpoint) ended the session (\(reason))")
            throw MediaError(.unavailable, "the WHIP endpoint ended the session (\(reason)) before the stream's end")
        }
    }

    /// `timeout` (ms) shortened to when the pacer next releases a packet, while packets wait in it.
    private func pacedTimeout(_ timeout: Int32) -> Int32 {
        guard let pacer = peer?.congestion?.pacer, pacer.queuedPackets > 0 || pacer.activeProbeClusterID != nil,
            let next = pacer.nextSendTime
        else { return timeout }
        let wait = (next - .nanoseconds(clock.now.nanosecondCount)) / .milliseconds(1)
        guard wait.isFinite else { return timeout }
        let milliseconds = Int32(max(0, min(wait.rounded(.up), 60_000)))
        // A negative timeout waits without end: the pacer's wait then.
        return timeout < 0 ? milliseconds : min(timeout, milliseconds)
    }

    /// Waits up to `timeoutMilliseconds` for a datagram on a media socket.
    private func waitForDatagrams(timeoutMilliseconds: Int32) {
        var descriptors = sockets.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
        if let relay {
            descriptors.append(pollfd(fd: relay.descriptor, events: Int16(POLLIN), revents: 0))
        }
        _ = Glibc.poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds)
    }

    /// Carries out the peer's outputs: datagrams leave over `path` (that of the datagram they answer), a check of
    /// the checklist from its pair's local candidate, else through the relay when ``relaysMedia``, else from the
    /// host socket of the destination's family.
    func perform(_ outputs: [WebRTCPeer.Output], over path: CandidatePath? = nil) {
        for output in outputs {
            switch output {
            case .send(let datagram, let address):
                // Under the relay policy nothing leaves a host socket once there is an allocation.
                let route = path ?? checklistPath(of: datagram)
                if iceTransportPolicy == .relay ? relaysMedia : (route.map { $0 == .relay } ?? relaysMedia) {
                    sendThroughRelay(datagram, to: address)
                    break
                }
                // One socket per family: the one of the destination's.
                guard let socket = sockets.first(where: { $0.address.host.count == address.host.count }) else { break }
                sendUDPDatagram(datagram, to: address, on: socket.descriptor)
            case .keyframeRequested: keyframeWanted = true
            }
        }
    }

    /// Sends one access unit (after ``connect(timeoutSeconds:)``).
    public func send(_ sample: CompressedSample) throws(MediaError) {
        guard isConnected, let peer else { throw MediaError(.unavailable, "WHIP publisher is not connected") }
        perform(try peer.sendSample(sample, captureNTP: wallClockSeconds() + 2_208_988_800, at: clock.now))
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
        if isConnected, let peer { perform(peer.endStream(at: clock.now)) }
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
    /// close_notify, the TURN allocation's release (Refresh with lifetime 0) when there is one, then DELETE of
    /// the session (with the token when the session URL has the token's origin).
    ///
    /// - Throws: a 401 as "the endpoint refused the token (401)"; a DELETE
    ///   that got no answer (`.timedOut`, `.invalidData`). A refused
    ///   connection is ``Ending/endpointClosed``, not an error: the media
    ///   was complete.
    @discardableResult
    public func finish() throws(MediaError) -> Ending {
        endStream()
        if isConnected, let peer { perform(peer.close(reason: "the publisher finished", at: clock.now)) }
        releaseRelay()
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
