// Statistics: the shared machinery's counts and per-session figures, the
// publishers listed with their receive figures.
extension WHIPEndpoint {
    /// What `GET /whep/stats` shows without the bearer token: counts only
    /// (``WHEPServer/countsJSON()``: `publishers`, `connectedPublishers`,
    /// `publishersFinished`, refused offers, 401 answers, HTTP connections
    /// refused or expired, stray datagrams).
    public func countsJSON() -> String { core.countsJSON() }

    /// Per publisher (under `viewers`, as ``WHEPServer/statisticsJSON()``
    /// lists every session): state, `direction` `receive`, access units,
    /// packets received and lost, NACKs and PLIs sent, ICE requests
    /// answered, refused datagrams; plus refused offers.
    public func statisticsJSON() -> String { core.statisticsJSON() }
}
