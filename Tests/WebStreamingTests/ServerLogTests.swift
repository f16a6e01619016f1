// The page server's messages through CodecLog: level, subsystem and text.
import Foundation
import MediaCore
import TestSupport
import Testing
import WebStreaming

@Suite(.serialized)
struct ServerLogTests {
    /// A client that connects and leaves is logged at `.info`, a refused
    /// Origin at `.warning`, both under the subsystem "webstream" and
    /// through the CodecLog handler of the thread that polls the server.
    @Test func clientEventsGoToCodecLog() throws {
        let harness = try ServerHarness(samples: [], clients: 0)
        _ = try HostileClientTests.runScript(
            """
            s = connect()
            s.sendall(upgrade())
            assert status(s) == 101
            s.close()
            r = connect()
            r.sendall(upgrade(origin="http://evil.example"))
            assert status(r) == 403
            r.close()
            time.sleep(0.3)
            """, port: harness.port)
        harness.stop()
        let messages = harness.messages
        #expect(messages.allSatisfy { $0.subsystem == "webstream" }, "\(messages)")
        let connected = messages.filter { $0.message.hasSuffix("connected; it starts at the next keyframe") }
        #expect(connected.count == 1, "\(messages)")
        #expect(connected.first?.level == .info)
        let refused = messages.filter { $0.message.contains("refused: Origin 'http://evil.example'") }
        #expect(refused.count == 1, "\(messages)")
        #expect(refused.first?.level == .warning)
        let left = messages.filter { $0.message.contains(") left") }
        #expect(left.count == 1, "\(messages)")
        #expect(left.first?.level == .info)
    }
}
