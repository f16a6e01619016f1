import FormatConv

// Media: the publishers' peers, the access units they sent, and the
// datagrams no publisher owns.
extension WHIPEndpoint {
    /// The access units publishers sent since the last call, in decode order.
    public func takeReceivedSamples() -> [CompressedSample] {
        defer { pendingSamples = [] }
        return pendingSamples + core.takeReceivedSamples()
    }
    /// Publishers now (connecting or connected).
    public var publisherCount: Int { core.publisherCount }
    /// Publishers whose SRTP keys are in place.
    public var connectedPublisherCount: Int { publishers.filter { $0.state == .connected }.count }
    /// Publishers that connected and have since left.
    public var publishersFinished: Int { core.publishersFinished }
    /// Every publisher so far, open or closed (the last 256 closed).
    public var publishers: [WebRTCPeer] { core.allViewers.filter { $0.video.isIncoming } }
    /// Datagrams from addresses no publisher owns.
    public var strayDatagrams: Int { core.strayDatagrams }
    /// Whether a publisher connected and every publisher has left since:
    /// what `codecs stream receive whip://` stops at.
    public var publishersHaveLeft: Bool { publishersFinished > 0 && publisherCount == 0 }
}
