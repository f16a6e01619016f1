import Foundation
import Testing

/// Sockets is the only module that calls `socket(2)`: no other file under
/// Sources/ does (comments aside).
struct OneNetworkLayerTests {
    @Test func noModuleButSocketsCallsSocket() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var swiftFiles = 0
        var calls: [String] = []
        for case let url as URL in files where url.pathExtension == "swift" {
            swiftFiles += 1
            let relative = String(url.path.dropFirst(root.path.count + 1))
            if relative.hasPrefix("Sources/Sockets/") { continue }
            let text = try String(contentsOf: url, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.range(of: "//").map { line[..<$0.lowerBound] } ?? line[...]
                if code.contains(/(^|[^A-Za-z0-9_])socket\(/) { calls.append("\(relative):\(number + 1)") }
            }
        }
        #expect(swiftFiles > 100)
        #expect(calls == [], "socket( outside Sources/Sockets")
    }
}
