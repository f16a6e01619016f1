// The generated snippet files match the documentation as it is now.
import Foundation
import Testing

@Suite struct DocSnippetsUpToDateTests {
    /// `scripts/doc-snippets --check` finds every Generated*.swift file equal
    /// to what it makes from the documentation now (a snippet edited
    /// without running the script fails here).
    @Test func generatedFilesAreUpToDate() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [root.appendingPathComponent("scripts/doc-snippets").path, "--check"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.hasPrefix("doc-snippets: ") && text.contains("snippets up to date"), "\(text)")
    }
}
