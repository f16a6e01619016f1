/// A one-line progress report on standard error, redrawn in place at most
/// four times a second, and only when standard error is a terminal.
final class ProgressLine {
    private let enabled: Bool
    private var lastDrawn: Double?

    init(enabled: Bool = standardErrorIsTerminal) { self.enabled = enabled }

    /// Replaces the line with `text` unless it was drawn less than 0.25 s ago.
    func show(_ text: @autoclosure () -> String) {
        guard enabled else { return }
        let now = monotonicSeconds()
        if let lastDrawn, now - lastDrawn < 0.25 { return }
        lastDrawn = now
        writeError("\r\u{1B}[K" + text())
    }

    /// Removes the line.
    func clear() {
        guard enabled, lastDrawn != nil else { return }
        writeError("\r\u{1B}[K")
    }

    /// Leaves the line as it stands and moves to the next one.
    func end() {
        guard enabled else { return }
        writeError("\n")
    }
}
