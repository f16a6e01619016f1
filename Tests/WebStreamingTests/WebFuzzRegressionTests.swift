import Foundation
import TestSupport
import Testing
import WebStreaming

/// Replays what the HTTPRequest and WebSocketFrames fuzz targets (Fuzz/,
/// `make fuzz`) ever crashed on, from Tests/Fixtures/fuzz/<Target>/, with the
/// harnesses' invariants.
struct WebFuzzRegressionTests {
    static func inputs(_ target: String) -> [(name: String, bytes: [UInt8])] {
        let folder = TestPaths.fixture("fuzz/\(target)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().compactMap { name in
            FileManager.default.contents(atPath: folder.appendingPathComponent(name).path).map { (name, Array($0)) }
        }
    }

    @Test func httpRequest() {
        for (name, bytes) in Self.inputs("HTTPRequest") {
            if case .complete(let request, let consumed) = HTTPRequest.parse(bytes[...]) {
                #expect(consumed <= bytes.count && request.fields.count <= HTTPRequest.maximumFields, "\(name)")
                guard case .complete(let again, consumed) = HTTPRequest.parse(bytes[0..<consumed]) else {
                    Issue.record("\(name): the head alone does not parse")
                    continue
                }
                #expect(again == request, "\(name)")
                _ = WebSocket.handshakeResponse(for: request)
            }
        }
    }

    @Test func webSocketFrames() {
        for (name, input) in Self.inputs("WebSocketFrames") where !input.isEmpty {
            let bytes = Array(input.dropFirst())
            let split = bytes.isEmpty ? 0 : Int(input[0]) % (bytes.count + 1)
            var whole = WebSocket.FrameReader(maximumMessageBytes: 4096)
            var pieces = WebSocket.FrameReader(maximumMessageBytes: 4096)
            let events = whole.append(bytes)
            let chunked = pieces.append(bytes[..<split]) + pieces.append(bytes[split...])
            #expect(events == chunked, "\(name)")
        }
    }
}
