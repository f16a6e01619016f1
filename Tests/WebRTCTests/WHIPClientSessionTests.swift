import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing
import WebRTC

/// ``WHIPClient`` publishing to the library's own WHIP endpoint
/// (``WHEPServer`` with a `whipPath`), polled on a thread of its own, in
/// process: the client learns when the endpoint stops answering (consent,
/// RFC 7675) and when it ends the session.
@Suite(.serialized)
struct WHIPClientSessionTests {
    /// A server polled on its own thread until ``stop()``; ``closeSessions()``
    /// has that thread end every session (BYE, close_notify).
    final class PolledServer: @unchecked Sendable {
        let httpPort: Int
        private let server: WHEPServer
        private let lock = NSLock()
        private var running = true
        private var closeRequested = false
        private let done = DispatchSemaphore(value: 0)

        init() throws {
            var configuration = WHEPServer.Configuration()
            configuration.whipPath = "/live"
            server = try WHEPServer(configuration)
            httpPort = server.httpPort
            Thread { [self] in
                while lock.withLock({ running }) {
                    try? server.poll(timeoutMilliseconds: 10)
                    if lock.withLock({ closeRequested }) {
                        server.close()
                        lock.withLock { closeRequested = false }
                    }
                }
                done.signal()
            }.start()
        }

        /// Stops polling: the server's sockets stay open, nothing answers.
        func stop() {
            guard lock.withLock({ running }) else { return }
            lock.withLock { running = false }
            done.wait()
        }

        func closeSessions() { lock.withLock { closeRequested = true } }
        deinit { stop() }
    }

    /// A short Constrained Baseline clip's access units.
    static func samples() throws -> [CompressedSample] {
        let directory = try TemporaryDirectory()
        let path = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(path, frames: 10, gop: 5)
        var assembler = AccessUnitAssembler(codec: .h264)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        return (assembler.append(bytes) + assembler.finish()).compactMap {
            if case .sample(let sample) = $0 { sample } else { nil }
        }
    }

    /// A client connected to `server` with a short consent interval and
    /// expiry, the clip sent.
    static func connectedClient(to server: PolledServer) throws -> WHIPClient {
        let samples = try Self.samples()
        let sps = try #require(samples[0].formatDescription.parameterSets.first { $0[0] & 0x1F == 7 })
        let client = try WHIPClient(
            url: "http://127.0.0.1:\(server.httpPort)/live", profileLevelID: Array(sps[1...3]))
        client.consentInterval = 0.1
        client.consentExpiry = 1
        try client.connect(timeoutSeconds: 10)
        for sample in samples {
            try client.send(sample)
            try client.poll(timeoutMilliseconds: 10)
        }
        return client
    }

    /// Polls `client` until it throws, for at most `seconds`.
    static func pollUntilFailure(_ client: WHIPClient, seconds: Double = 10) -> MediaError? {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            do { try client.poll(timeoutMilliseconds: 10) } catch { return error }
        }
        return nil
    }

    /// While the endpoint answers, consent stays (2 s of polls, twice the
    /// expiry); once it stops answering, polls throw after the expiry.
    @Test func consentExpiresWhenTheEndpointStopsAnswering() throws {
        let server = try PolledServer()
        let client = try Self.connectedClient(to: server)
        #expect(Self.pollUntilFailure(client, seconds: 2) == nil)
        #expect(client.isConnected)
        server.stop()
        let error = try #require(Self.pollUntilFailure(client))
        #expect(
            error.message
                == "the WHIP endpoint stopped answering: no response to consent checks for 1.0 s (RFC 7675); "
                + "media stopped")
        #expect(!client.isConnected)
        #expect(throws: MediaError.self) { try client.send(try Self.samples()[0]) }
    }

    /// The endpoint ends the session before the stream's end.
    @Test func anEndedSessionIsReported() throws {
        let server = try PolledServer()
        let client = try Self.connectedClient(to: server)
        server.closeSessions()
        let error = try #require(Self.pollUntilFailure(client))
        #expect(error.message.hasPrefix("the WHIP endpoint ended the session ("), "\(error.message)")
        server.stop()
    }
}
