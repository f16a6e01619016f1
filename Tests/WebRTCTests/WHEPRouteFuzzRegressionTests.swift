import Foundation
import Testing

@testable import WebRTC

/// The `Authorization` and `WHEPRoute` fuzz targets' seeds and any crashing
/// inputs found since (`Tests/Fixtures/fuzz/Authorization`, `…/WHEPRoute`)
/// through the same entry points, with the routes the seeds must give.
struct WHEPRouteFuzzRegressionTests {
    static func inputs(_ target: String) -> [String: [UInt8]] {
        var inputs: [String: [UInt8]] = [:]
        for url in WebRTCFuzzRegressionTests.files(target) {
            inputs[url.lastPathComponent] = (try? Data(contentsOf: url)).map { Array($0) }
        }
        return inputs
    }

    @Test func replaysTheAuthorizationInputs() throws {
        let inputs = Self.inputs("Authorization")
        #expect(inputs.count >= 5)
        let taken = inputs.mapValues { BearerToken.parse(authorization: String(decoding: $0, as: UTF8.self)) }
        #expect(taken["bearer"] == Array("abc".utf8))
        #expect(taken["spaces-padding"] == Array("a.b-c~d+e/f==".utf8))
        for name in ["basic", "padding-only", "two-words"] { #expect(taken[name] == .some(nil), "\(name)") }
        for token in taken.values.compactMap({ $0 }) {
            #expect(BearerToken.matches(token, token) && !BearerToken.matches(token + [0x41], token))
        }
    }

    @Test func replaysTheRouteInputs() throws {
        let inputs = Self.inputs("WHEPRoute")
        #expect(inputs.count >= 6)
        var routes: [String: WHEPRoute] = [:]
        for (name, bytes) in inputs where !bytes.isEmpty {
            guard case .complete(let request) = WHEPRequest.parse(Array(bytes.dropFirst())) else { continue }
            routes[name] = WHEPRoute.decide(
                request, whipPath: bytes[0] & 1 != 0 ? "/live" : nil,
                token: bytes[0] & 2 != 0 ? Array("T0ken".utf8) : nil)
        }
        #expect(routes["whip-post"] == .offer(incoming: true))
        #expect(routes["delete-wrong-token"] == .unauthorized(presented: true))
        #expect(routes["stats-token"] == .statistics(full: true, headOnly: false))
        #expect(routes["head-page"] == .page(headOnly: true))
        #expect(routes["preflight-session"] == .preflight)
        #expect(routes["patch"] == .patch(id: "x"))
    }
}
