// WHIPClient's ICE restart (RFC 9725 4.3, RFC 8840): new ice-ufrag and ice-pwd PATCHed to the session URL with
// If-Match "*", the endpoint's new ones from its 200, the selected pair carrying media throughout.
import MediaCore

extension WHIPClient {
    /// Restarts ICE once connected (RFC 9725 4.3): new ice-ufrag and ice-pwd, PATCHed to the session URL as an
    /// `application/trickle-ice-sdpfrag` with the video's mid, our candidates, `a=end-of-candidates` and
    /// `If-Match: *`; the endpoint's 200 fragment carries its new ice-ufrag and ice-pwd, and its `ETag` the new
    /// ICE session's entity-tag (``iceSessionTag``). From then on our checks (a check at once, then consent
    /// checks) use the new credentials; the selected pair, DTLS and SRTP stay, so media goes on meanwhile.
    /// The PATCH waits for the endpoint's answer (``poll(timeoutMilliseconds:)`` does not run during it).
    ///
    /// - Throws: `.unavailable` before the connection, without a session URL, or when the endpoint answers
    ///   anything but 200 (its status and the start of its body; a 401 as ``connect(timeoutSeconds:)`` says it);
    ///   `.invalidData` when the 200's fragment lacks an ice-ufrag or ice-pwd, or does not parse. The old
    ///   credentials then stay in use.
    public func restartICE() throws(MediaError) {
        guard isConnected, let peer else {
            throw MediaError(.unavailable, "an ICE restart needs a connected publisher")
        }
        guard let session else {
            throw MediaError(.unavailable, "the WHIP endpoint gave no session URL to PATCH an ICE restart to")
        }
        let local = ICELiteAgent.randomCredentials()
        var fragment = TrickleFragment()
        fragment.usernameFragment = local.usernameFragment
        fragment.password = local.password
        fragment.mids = ["0"]
        fragment.candidateLines = offeredCandidateLines
        fragment.endOfCandidates = true
        let (response, answeredBy) = try request(
            method: "PATCH", url: session, body: fragment.text, contentType: TrickleFragment.mediaType,
            fields: ["If-Match: *"])
        if response.status == 401 { throw unauthorized("PATCH", at: answeredBy) }
        guard response.status == 200 else {
            throw MediaError(
                .unavailable,
                "WHIP endpoint answered the ICE restart's PATCH with \(response.status): \(response.body.prefix(200))")
        }
        let answer = try TrickleFragment(parsing: response.body)
        guard let ufrag = answer.usernameFragment, let pwd = answer.password else {
            throw MediaError(.invalidData, "the endpoint's answer to the ICE restart has no ice-ufrag and ice-pwd")
        }
        credentials = local
        iceSessionTag = response.fields["etag"]
        iceRestarts += 1
        CodecLog.log(.info, subsystem: "whip", "ICE restart: new ice-ufrag \(local.usernameFragment)")
        perform(peer.restartICE(local: local, remote: (ufrag, pwd)))
    }
}
