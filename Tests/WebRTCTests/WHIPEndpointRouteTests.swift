// A WHIP endpoint takes publishers only: a viewer's WHEP offer and the
// player page get 404 there, while a WHEP server still answers both.
import MediaCore
import Testing

@testable import WebRTC

private typealias Client = LoopbackHTTPClient

@Suite struct WHIPEndpointRouteTests {
    @Test func aWHIPEndpointServesNoViewerAndNoPage() throws {
        let endpoint = try WHIPEndpoint(WHIPEndpoint.Configuration(path: "/live"))
        defer { endpoint.close() }
        let viewer = try Client.exchange(endpoint.core, Client.offer("/whep"))
        #expect(viewer.status == 404)
        let page = try Client.exchange(endpoint.core, Client.request("GET", "/"))
        #expect(page.status == 404)
        #expect(endpoint.core.peers.isEmpty)
        // The publisher's path is served: a browser's offer (it sends video) is answered.
        let publisher = try Client.exchange(endpoint.core, Client.offer("/live", Offers.browser()))
        #expect(publisher.status != 404)
    }

    @Test func aWHEPServerStillServesViewersAndThePage() throws {
        let server = try WHEPServer(WHEPServer.Configuration())
        let page = try Client.exchange(server, Client.request("GET", "/"))
        #expect(page.status == 200)
        let viewer = try Client.exchange(server, Client.offer("/whep"))
        #expect(viewer.status != 404)
    }

    @Test func theRouteOfAViewerOfferDependsOnWhetherViewersAreServed() throws {
        guard case .complete(let request) = WHEPRequest.parse(Array(Client.offer("/whep").utf8)) else {
            Issue.record("the offer did not parse")
            return
        }
        #expect(WHEPRoute.decide(request, whipPath: "/live", token: nil) == .offer(incoming: false))
        #expect(
            WHEPRoute.decide(request, whipPath: "/live", token: nil, servesViewers: false)
                == .refused(status: 404, reason: "POST /whep is not served"))
    }
}
