import MediaCore
import WebRTC

/// libFuzzer entry: the input as a trickle ICE PATCH (RFC 9725 4.3). Input that starts with `PATCH ` is read as
/// the request a WHEP or WHIP endpoint gets (`WHEPRequest.parse`, its `If-Match` field and its body); any other
/// input is the body alone. The body goes through `TrickleFragment(parsing:)`. A fragment read has as many
/// candidate lines as candidates, at most `maximumCandidates` candidate lines in all, credentials in pairs and
/// 4- or 16-byte hosts with a port; its `text` reads back to the same credentials, mids, candidates and flags,
/// and writing is a fixpoint.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTrickleFragment(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var body = bytes
    if bytes.starts(with: Array("PATCH ".utf8)) {
        guard case .complete(let request) = WHEPRequest.parse(bytes) else { return 0 }
        if let ifMatch = request.fields["if-match"], ifMatch.hasPrefix(" ") || ifMatch.hasSuffix(" ") {
            fatalError("the If-Match field keeps its surrounding spaces: \(ifMatch)")
        }
        body = request.body
    }
    guard let fragment = try? TrickleFragment(parsing: String(decoding: body, as: UTF8.self)) else { return 0 }
    guard fragment.candidates.count == fragment.candidateLines.count,
        fragment.candidateLines.count + fragment.candidatesLeftOut <= TrickleFragment.maximumCandidates,
        (fragment.usernameFragment == nil) == (fragment.password == nil)
    else { fatalError("a fragment out of its bounds: \(fragment)") }
    for candidate in fragment.candidates where ![4, 16].contains(candidate.host.count) || candidate.port == 0 {
        fatalError("a candidate without a host or port: \(candidate)")
    }
    let text = fragment.text
    let again: TrickleFragment
    do { again = try TrickleFragment(parsing: text) } catch {
        fatalError("our fragment does not parse: \(error)\n\(text)")
    }
    var expected = fragment
    expected.candidatesLeftOut = 0
    guard again == expected else { fatalError("the fragment changed when written:\n\(text)") }
    guard again.text == text else { fatalError("writing the fragment is not a fixpoint:\n\(text)") }
    return 0
}
