import WebRTC

/// libFuzzer entry: a selector byte (bit 0: a WHIP endpoint at `/live`;
/// bit 1: the bearer token `T0ken` is required), then the bytes a WHEP/WHIP
/// endpoint reads from a connection. A request that reads whole is routed by
/// `WHEPRoute.decide`: an offer, a DELETE or a PATCH only with the token
/// (when one is required) and only of the endpoint's own paths; the full
/// statistics only with the token; 401 only when the token is required and
/// missing or wrong, and never once the right one is added; CORS fields on
/// the endpoint's answers alone.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWHEPRoute(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let selector = data[0]
    let whipPath: String? = selector & 1 != 0 ? "/live" : nil
    let token: [UInt8]? = selector & 2 != 0 ? Array("T0ken".utf8) : nil
    guard case .complete(let request) = WHEPRequest.parse(Array(UnsafeBufferPointer(start: data + 1, count: size - 1)))
    else { return 0 }
    let route = WHEPRoute.decide(request, whipPath: whipPath, token: token)
    let authorized = BearerToken.authorizes(request.fields, token)
    let endpoints = ["/whep"] + (whipPath.map { [$0] } ?? [])
    func fail(_ what: String) -> Never { fatalError("\(request.method) \(request.path) → \(route): \(what)") }
    switch route {
    case .offer(let incoming):
        if !authorized || request.method != "POST" { fail("an offer without the token or a POST") }
        if request.path != (incoming ? whipPath ?? "" : "/whep") { fail("an offer to another path") }
    case .delete(let id), .patch(let id):
        if !authorized || !["DELETE", "PATCH"].contains(request.method) { fail("without the token") }
        if id.isEmpty || id.contains("/") || !endpoints.contains(where: { request.path == $0 + "/" + id }) {
            fail("a session outside the endpoint")
        }
        if request.path == WHEPRoute.statisticsPath { fail("the statistics as a session") }
    case .statistics(let full, let headOnly):
        if full && (token == nil || !authorized) { fail("the full statistics without the token") }
        if request.path != WHEPRoute.statisticsPath || headOnly != (request.method == "HEAD") { fail("elsewhere") }
    case .unauthorized:
        if token == nil || authorized { fail("401 with no token required or the right one") }
    case .preflight:
        if request.method != "OPTIONS" { fail("a preflight of another method") }
    case .page(let headOnly):
        if request.path != "/" || headOnly != (request.method == "HEAD") { fail("the page elsewhere") }
    case .refused(let status, _):
        if status != 404 && status != 405 { fail("status \(status)") }
    }
    switch route {
    case .page, .statistics, .refused: if route.allowsCrossOrigin { fail("CORS beyond the endpoint") }
    default: if !route.allowsCrossOrigin { fail("no CORS on the endpoint") }
    }
    if token != nil {
        var withToken = request
        withToken.fields["authorization"] = "Bearer T0ken"
        if case .unauthorized = WHEPRoute.decide(withToken, whipPath: whipPath, token: token) {
            fail("401 with the right token")
        }
    }
    return 0
}
