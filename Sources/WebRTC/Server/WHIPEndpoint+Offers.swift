// Offers: those refused (bad SDP, no H.264 to receive, past the bounds), as the
// shared signalling machinery answered them.
extension WHIPEndpoint {
    /// Offers refused, in all.
    public var refusedOfferCount: Int { core.refusedOfferCount }
    /// The reasons for the last offers refused (at most 64, oldest first).
    public var refusedOffers: [String] { core.refusedOffers }
}
