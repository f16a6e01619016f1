// Routing: what a WHEP or WHIP endpoint does with a request that read whole,
// decided from its method, path and bearer token alone (no session state).

/// What a WHEP/WHIP endpoint does with a request, decided before any
/// session is looked at: the bearer token (when one is configured) is
/// checked first, so an unauthorised request learns nothing about which
/// sessions exist.
///
/// - The endpoint (`/whep`, the WHIP path) and its session URLs
///   (`/whep/ID`, `WHIP-PATH/ID`) answer `OPTIONS` without a token (a
///   browser's CORS preflight carries none); `POST` to the endpoint and
///   `DELETE`/`PATCH` of a session URL need the token.
/// - `GET`/`HEAD /` is the player page; `GET`/`HEAD /whep/stats` the
///   statistics: counts for anyone, the full figures (session ids
///   included) only with the token.
/// - Anything else is 405 on the endpoint's paths, 404 elsewhere.
public enum WHEPRoute: Sendable, Hashable {
    /// `OPTIONS` on the endpoint or a session URL: 204 with the CORS fields.
    case preflight
    /// `POST` of an offer: a viewer's (`incoming` false) or a publisher's.
    case offer(incoming: Bool)
    /// `DELETE` of the session `id`.
    case delete(id: String)
    /// `PATCH` of the session `id` (trickle ICE, not supported: 405).
    case patch(id: String)
    /// `GET /` (or `HEAD /`: the same head, no body).
    case page(headOnly: Bool)
    /// `GET /whep/stats`: the full figures when `full`, else counts only.
    case statistics(full: Bool, headOnly: Bool)
    /// 401 with `WWW-Authenticate: Bearer`; `presented` tells whether the
    /// request carried a bearer token at all (then it was the wrong one).
    case unauthorized(presented: Bool)
    /// A status (404, 405) and why.
    case refused(status: Int, reason: String)

    /// The path of the statistics.
    public static let statisticsPath = "/whep/stats"

    /// Decides what `request` gets from an endpoint at `/whep` (unless
    /// `servesViewers` is false: a WHIP endpoint alone, which then serves
    /// neither `/whep` nor the player page) and at `whipPath` when that is
    /// set, whose bearer token is `token` (nil: none required).
    public static func decide(
        _ request: WHEPRequest, whipPath: String?, token: [UInt8]?, servesViewers: Bool = true
    ) -> WHEPRoute {
        let path = request.path
        let endpoints = (servesViewers ? ["/whep"] : []) + (whipPath.map { [$0] } ?? [])
        let isEndpoint = endpoints.contains(path)
        let session = path == statisticsPath ? nil : sessionID(path, endpoints: endpoints)
        let authorized = BearerToken.authorizes(request.fields, token)
        let unauthorized = WHEPRoute.unauthorized(presented: request.fields["authorization"] != nil)
        switch request.method {
        case "OPTIONS" where isEndpoint || session != nil:
            return .preflight
        case "POST" where isEndpoint:
            return authorized ? .offer(incoming: path != "/whep") : unauthorized
        case "DELETE" where session != nil:
            return authorized ? .delete(id: session!) : unauthorized
        case "PATCH" where session != nil:
            return authorized ? .patch(id: session!) : unauthorized
        case "GET" where path == "/" && servesViewers, "HEAD" where path == "/" && servesViewers:
            return .page(headOnly: request.method == "HEAD")
        case "GET" where path == statisticsPath, "HEAD" where path == statisticsPath:
            if token != nil && request.fields["authorization"] != nil && !authorized { return unauthorized }
            return .statistics(full: token != nil && authorized, headOnly: request.method == "HEAD")
        default:
            let served = isEndpoint || session != nil || path == statisticsPath
            return .refused(status: served ? 405 : 404, reason: "\(request.method) \(path) is not served")
        }
    }

    /// Whether the answer carries the CORS fields: only the endpoint's own
    /// answers (preflight, offers, DELETE, PATCH and their refusals), which
    /// a player on another origin needs; never the page or the statistics.
    public var allowsCrossOrigin: Bool {
        switch self {
        case .preflight, .offer, .delete, .patch, .unauthorized: return true
        case .page, .statistics, .refused: return false
        }
    }

    /// The session id in a session URL (`ENDPOINT/ID`, one path segment).
    static func sessionID(_ path: String, endpoints: [String]) -> String? {
        for prefix in endpoints.map({ $0 + "/" }) where path.hasPrefix(prefix) {
            let id = path.dropFirst(prefix.count)
            if !id.isEmpty && !id.contains("/") { return String(id) }
        }
        return nil
    }
}
