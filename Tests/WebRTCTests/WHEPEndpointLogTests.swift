import Foundation
import Testing

@testable import WebRTC

/// The endpoint's log under a flood of refused requests: at most
/// `maximumLogLinesPerSecond` lines about them a second, then one line with
/// the count left out; lines about sessions that start or end always.
/// The log's clock is fixed by the tests (no wall-clock timing).
struct WHEPEndpointLogTests {
    typealias Client = LoopbackHTTPClient

    @Test func theBudgetLetsThroughItsLinesThenCountsTheRest() {
        var budget = LogBudget(linesPerSecond: 3)
        var out: [String] = []
        for index in 0..<10 { out += budget.admit("r\(index)", at: 5 + Double(index) * 0.01) }
        #expect(out == ["r0", "r1", "r2"])
        #expect(budget.leftOut == 7)
        #expect(budget.summary(at: 5.9) == nil, "the window is not over")
        // The next window starts with the count, which takes one of its lines.
        #expect(
            budget.admit("r10", at: 6.0) == [
                "7 lines about refused requests left out (more than 3 a second)", "r10",
            ])
        #expect(budget.admit("r11", at: 6.1) == ["r11"])
        #expect(budget.admit("r12", at: 6.2) == [])
        #expect(budget.summary(at: 6.5) == nil)
        #expect(budget.summary(at: 7.0) == "1 line about refused requests left out (more than 3 a second)")
        #expect(budget.summary(at: 9.0) == nil, "nothing left out since")
        // The count line opened a window of its own at 7.0.
        #expect(budget.admit("r13", at: 7.5) == ["r13"])
        #expect(budget.admit("r14", at: 7.6) == ["r14"])
        #expect(budget.admit("r15", at: 7.7) == [])
        #expect(budget.summary(at: 7.8, force: true) == "1 line about refused requests left out (more than 3 a second)")
        #expect(budget.leftOutInAll == 9)
    }

    @Test func refusedRequestsAreBoundedAndSessionsAlwaysLogged() throws {
        let server = try WHEPEndpointAuthorizationTests.liveServer()
        let authorized = ["Authorization: Bearer \(WHEPEndpointAuthorizationTests.token)"]
        var lines: [String] = []
        server.logObserver = { lines.append($0.message) }
        server.logTime = 100
        var statuses: [Int: Int] = [:]
        for _ in 0..<30 {
            statuses[try Client.exchange(server, Client.offer(), from: "127.0.0.2").status, default: 0] += 1
        }
        var locations: [String] = []
        for _ in 0..<10 {
            let response = try Client.exchange(server, Client.offer(fields: authorized), from: "127.0.0.3")
            statuses[response.status, default: 0] += 1
            if let location = response.field("Location") { locations.append(location) }
        }
        #expect(statuses == [401: 30, 201: 4, 429: 6])
        let refusals = lines.filter { $0.contains(" refused: ") }
        #expect(refusals.count == 20, "\(lines)")
        #expect(refusals.allSatisfy { $0.hasPrefix("POST /whep from 127.0.0.2:") && $0.hasSuffix("refused: no token") })
        #expect(lines.filter { $0.contains(" joined from 127.0.0.3:") }.count == 4)
        #expect(server.logLinesLeftOut == 16)
        #expect(server.unauthorizedRequests == 30)
        #expect(server.refusedOfferCount == 6)

        // Once the second is over, the next poll says how many were left out.
        server.logTime = 101.5
        try server.poll(timeoutMilliseconds: 0)
        #expect(lines.last == "16 lines about refused requests left out (more than 20 a second)")
        let before = lines.count
        try server.poll(timeoutMilliseconds: 0)
        #expect(lines.count == before, "said once")

        // A session that ends is logged however full the budget.
        server.maximumLogLinesPerSecond = 1
        #expect(try Client.exchange(server, Client.offer(), from: "127.0.0.2").status == 401)
        let ended = try Client.exchange(server, Client.request("DELETE", locations[0], fields: authorized))
        #expect(ended.status == 200)
        #expect(lines.count == before + 1, "\(lines.suffix(3))")
        #expect(lines.last?.contains("left: the viewer sent DELETE from 127.0.0.1:") == true)
        server.close()
        #expect(lines.filter { $0.contains(" left: ") }.count == 4)
        #expect(lines.last == "1 line about refused requests left out (more than 1 a second)")
    }
}
