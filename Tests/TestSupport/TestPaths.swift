import Foundation

/// Locations shared by the test targets.
public enum TestPaths {
    /// The repository root (the folder holding Package.swift).
    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// The repository's `Tests/Fixtures` folder.
    public static var fixtures: URL {
        repositoryRoot.appendingPathComponent("Tests").appendingPathComponent("Fixtures")
    }

    /// The fixture `name` under `Tests/Fixtures`.
    public static func fixture(_ name: String) -> URL {
        fixtures.appendingPathComponent(name)
    }

    /// The folder SwiftPM builds products into for the running tests
    /// (`.build/debug` or `.build/release`), found from the test bundle's
    /// location: the `codecs` executable sits there.
    public static var productsDirectory: URL {
        let bundle = Bundle.main.bundleURL
        // `swift test` runs `<products>/CodecSessionsPackageTests.xctest` (a file
        // on Linux) or the swift-testing runner from the same folder.
        for candidate in [bundle, bundle.deletingLastPathComponent()] {
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("codecs").path) {
                return candidate
            }
        }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if FileManager.default.fileExists(atPath: executable.appendingPathComponent("codecs").path) {
            return executable
        }
        return repositoryRoot.appendingPathComponent(".build").appendingPathComponent("debug")
    }

    /// The built `codecs` tool.
    public static var codecsExecutable: URL {
        productsDirectory.appendingPathComponent("codecs")
    }
}

/// A fresh directory under the system's temporary folder, removed with
/// everything in it when the value is released (or by ``remove()``).
///
/// ```swift
/// let directory = try TemporaryDirectory()
/// let clip = directory.path("clip.y4m")
/// ```
public final class TemporaryDirectory: @unchecked Sendable {
    /// The directory's location.
    public let url: URL

    /// Creates the directory; `prefix` starts its name.
    public init(prefix: String = "codecsessions-test") throws {
        let name = "\(prefix)-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)"
        url = FileManager.default.temporaryDirectory.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { remove() }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    /// Deletes the directory and its contents now.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
