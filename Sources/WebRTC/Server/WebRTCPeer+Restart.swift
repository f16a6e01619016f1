// A controlling peer's ICE restart (RFC 8445 9): new credentials on both sides while the selected pair keeps
// carrying media.

extension WebRTCPeer {
    /// The remote ice-ufrag and ice-pwd the controlling peer's checks use: the answer's, or the last ICE restart's.
    var remoteCredentials: (usernameFragment: String, password: String) {
        controlling?.restartedCredentials ?? (video.remoteUsernameFragment, video.remotePassword)
    }

    /// For a controlling peer, an ICE restart: our new `local` credentials (the remote side's checks must use
    /// them), the remote side's new ones for our checks. The selected pair, consent and DTLS stay, so media goes
    /// on; checks still waiting for a response are forgotten (their responses no longer verify), and a check with
    /// the new credentials goes to the selected pair at once. Nothing for a controlled peer.
    public func restartICE(
        local: (usernameFragment: String, password: String),
        remote: (usernameFragment: String, password: String)
    ) -> [Output] {
        guard controlling != nil else { return [] }
        ice.restart(
            localUsernameFragment: local.usernameFragment, localPassword: local.password,
            remoteUsernameFragment: remote.usernameFragment)
        controlling!.restartedCredentials = remote
        controlling!.pendingChecks.removeAll()
        guard let selected = controlling!.selected else { return [] }
        return [check(selected)]
    }
}
