// WHIPEndpoint.nextSample: the synchronous receive an app (or the CLI) reads
// one access unit at a time, with a deadline for the first publisher and a
// stop it checks while it waits.
import FormatConv
import MediaCore
import Testing

@testable import WebRTC

@Suite(.serialized) struct WHIPEndpointNextSampleTests {
    @Test func noPublisherWithinTheDeadlineIsATimeout() throws {
        let endpoint = try WHIPEndpoint(WHIPEndpoint.Configuration(path: "/live"))
        defer { endpoint.close() }
        #expect(throws: MediaError.self) { try endpoint.nextSample(firstPublisherWithin: .milliseconds(200)) }
        do {
            _ = try endpoint.nextSample(firstPublisherWithin: .milliseconds(200))
        } catch {
            #expect(error.code == .timedOut)
            #expect(error.message == "no publisher within 0.2 s")
        }
    }

    @Test func aStopEndsTheWaitWithNothing() throws {
        let endpoint = try WHIPEndpoint(WHIPEndpoint.Configuration(path: "/live"))
        defer { endpoint.close() }
        var asked = 0
        let sample = try endpoint.nextSample(
            stopRequested: {
                asked += 1
                return asked > 3
            })
        #expect(sample == nil)
        #expect(asked == 4, "the stop is checked before each 20 ms step")
    }

    @Test func everyAccessUnitComesOutOnceInOrderThenNil() async throws {
        let samples = try WHIPClientSessionTests.samples()
        var configuration = WHIPEndpoint.Configuration(path: "/live")
        configuration.handshakeTimeout = 60
        let endpoint = try WHIPEndpoint(configuration)
        defer { endpoint.close() }
        let publisher = WHIPEndpointReceiverTests.Publisher(
            port: endpoint.httpPort, path: "/live", samples: samples, deletes: false)
        var received: [CompressedSample] = []
        while let sample = try endpoint.nextSample(firstPublisherWithin: .seconds(60)) { received.append(sample) }
        #expect(try await publisher.outcome().get() == nil)
        #expect(received.map(\.data) == samples.map(\.data), "the bytes sent, once each, in order")
        #expect(endpoint.takeReceivedSamples().isEmpty)
    }
}
