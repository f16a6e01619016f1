import Foundation

/// Locations shared by the test targets.
public enum TestPaths {
    /// The repository's `Tests/Fixtures` folder.
    public static var fixtures: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures")
    }
}
