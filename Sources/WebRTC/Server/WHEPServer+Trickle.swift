// Trickle ICE and ICE restarts (RFC 9725 4.3, RFC 8840): a session's PATCH
// with an SDP fragment, checked against the session's entity-tag and ICE
// credentials, its candidates recorded, or new credentials on both sides.
import MediaCore

extension WHEPServer {
    /// A session's ICE state as PATCH sees it: the entity-tag of its ICE session (RFC 9725 4.3.1), the peer's
    /// credentials, and the candidates it trickled.
    struct TrickleState {
        var entityTag: String
        var remoteUsernameFragment: String
        var remotePassword: String
        var candidates: [UDPAddress] = []
        var endOfCandidates = false
    }

    /// The longest PATCH body taken, in bytes.
    static let maximumPatchBytes = 16384
    /// The most remote candidates one session records from its PATCHes; a PATCH past it gets 400.
    static let maximumTrickledCandidates = 64

    /// A fresh strong entity-tag (quoted, 64 random bits).
    static func makeEntityTag() -> String {
        "\"" + String(UInt64.random(in: 0...UInt64.max), radix: 16) + "\""
    }

    /// The remote candidates session `id` trickled so far (PATCH), and whether it sent `a=end-of-candidates`.
    public func trickledCandidates(of id: String) -> (candidates: [UDPAddress], endOfCandidates: Bool)? {
        trickle[id].map { ($0.candidates, $0.endOfCandidates) }
    }

    /// The entity-tag of session `id`'s ICE session (the `ETag` of its 201 and of each ICE restart's 200).
    public func entityTag(of id: String) -> String? { trickle[id]?.entityTag }

    /// Answers `PATCH` of session `id` (the token already checked): 404 for an unknown session, 415 unless
    /// `Content-Type: application/trickle-ice-sdpfrag`, 413 past ``maximumPatchBytes``, 400 for a malformed
    /// fragment, 412 when `If-Match` names another ICE session than the current one or the fragment's ice-ufrag
    /// and ice-pwd are not the session's; with `If-Match: *` and new credentials an ICE restart (200 with our new
    /// ice-ufrag and ice-pwd and a new `ETag`); else the candidates are recorded (204).
    func patchSession(_ request: WHEPRequest, id: String, cors: Bool) -> [UInt8] {
        guard let peer = peers[id], var state = trickle[id] else {
            return Self.response(404, body: "no such session", cors: cors)
        }
        let type = request.fields["content-type"]?.split(separator: ";").first?.trimmingSpaces
        guard type?.lowercased() == TrickleFragment.mediaType else {
            return Self.response(415, body: "a PATCH must be Content-Type: \(TrickleFragment.mediaType)", cors: cors)
        }
        guard request.body.count <= Self.maximumPatchBytes else {
            return Self.response(413, body: "the SDP fragment is over \(Self.maximumPatchBytes) bytes", cors: cors)
        }
        let fragment: TrickleFragment
        do {
            fragment = try TrickleFragment(parsing: String(decoding: request.body, as: UTF8.self))
        } catch { return Self.response(400, body: error.message, cors: cors) }
        let ifMatch = request.fields["if-match"].map { String($0[...].trimmingSpaces) }
        let restart =
            ifMatch == "*" && fragment.usernameFragment != nil
            && (fragment.usernameFragment != state.remoteUsernameFragment || fragment.password != state.remotePassword)
        if let ifMatch, ifMatch != "*", ifMatch != state.entityTag {
            return Self.response(
                412, body: "If-Match \(ifMatch.prefix(80)) is not the session's ICE session (\(state.entityTag))",
                cors: cors)
        }
        if !restart, let ufrag = fragment.usernameFragment,
            ufrag != state.remoteUsernameFragment || fragment.password != state.remotePassword
        {
            return Self.response(
                412,
                body: "the fragment's ice-ufrag and ice-pwd are not the session's (an ICE restart needs If-Match: *)",
                cors: cors)
        }
        if restart, let ufrag = fragment.usernameFragment, let pwd = fragment.password {
            guard !ufrag.isEmpty, pwd.count >= 22 else {
                return Self.response(
                    400, body: "an ICE restart needs an ice-ufrag and a 22-character ice-pwd", cors: cors)
            }
            var credentials = ICELiteAgent.randomCredentials()
            while peersByUsername[credentials.usernameFragment] != nil {
                credentials = ICELiteAgent.randomCredentials()
            }
            peersByUsername[peer.ice.localUsernameFragment] = nil
            peer.ice.restart(
                localUsernameFragment: credentials.usernameFragment, localPassword: credentials.password,
                remoteUsernameFragment: ufrag)
            peersByUsername[credentials.usernameFragment] = peer
            state = TrickleState(entityTag: Self.makeEntityTag(), remoteUsernameFragment: ufrag, remotePassword: pwd)
            var answer = TrickleFragment()
            answer.iceLite = true
            answer.usernameFragment = credentials.usernameFragment
            answer.password = credentials.password
            state.candidates = fragment.candidates
            state.endOfCandidates = fragment.endOfCandidates
            trickle[id] = state
            log(.info, "session \(id): ICE restart")
            return Self.response(
                200, body: answer.text, type: TrickleFragment.mediaType, extra: ["ETag: \(state.entityTag)"], cors: cors
            )
        }
        let new = fragment.candidates.filter { !state.candidates.contains($0) }
        guard state.candidates.count + new.count <= Self.maximumTrickledCandidates else {
            return Self.response(
                400, body: "a session takes at most \(Self.maximumTrickledCandidates) trickled candidates", cors: cors)
        }
        state.candidates += new
        state.endOfCandidates = state.endOfCandidates || fragment.endOfCandidates
        trickle[id] = state
        return Self.response(204, cors: cors)
    }
}
