import MediaCore

// The log: lines about refused requests bounded per second (so that
// strangers cannot fill a disk or a terminal), lines about sessions always.

/// At most ``linesPerSecond`` lines in any one-second window that starts with
/// the first line after the last window; past it lines are counted, and the
/// count goes out as one line of its own before the next line admitted, or
/// from ``summary(at:force:)`` once the window is over.
struct LogBudget {
    /// The most lines a window lets through (the count line included).
    var linesPerSecond: Int
    /// When the current window began.
    var windowStart = -Double.infinity
    var linesInWindow = 0
    /// Lines not written since the last count line.
    private(set) var leftOut = 0
    /// Lines not written in all.
    private(set) var leftOutInAll = 0

    init(linesPerSecond: Int) { self.linesPerSecond = linesPerSecond }

    /// The lines to write for `line` offered at `now` (seconds): none when the
    /// window is full, else `line`, after the count of those left out when
    /// there are any.
    mutating func admit(_ line: String, at now: Double) -> [String] {
        if now - windowStart >= 1 {
            windowStart = now
            linesInWindow = 0
        }
        guard linesInWindow < linesPerSecond else {
            leftOut += 1
            leftOutInAll += 1
            return []
        }
        var lines: [String] = []
        if leftOut > 0 {
            lines.append(countLine())
            linesInWindow += 1
            guard linesInWindow < linesPerSecond else {
                leftOut += 1
                leftOutInAll += 1
                return lines
            }
        }
        linesInWindow += 1
        return lines + [line]
    }

    /// The count of the lines left out, once their window is over (or at
    /// once with `force`, when the log ends); nil when none are.
    mutating func summary(at now: Double, force: Bool = false) -> String? {
        guard leftOut > 0, force || now - windowStart >= 1 else { return nil }
        windowStart = now
        linesInWindow = 1
        return countLine()
    }

    private mutating func countLine() -> String {
        defer { leftOut = 0 }
        return "\(leftOut) \(leftOut == 1 ? "line" : "lines") about refused requests left out"
            + " (more than \(linesPerSecond) a second)"
    }
}

extension WHEPServer {
    /// The most lines a second about refused requests (offers, requests
    /// without the token) given to `CodecLog`; past it they are counted and the
    /// count is logged once the second is over. Lines about sessions that
    /// start or end always go out. 20 by default.
    public var maximumLogLinesPerSecond: Int {
        get { logBudget.linesPerSecond }
        set { logBudget.linesPerSecond = max(1, newValue) }
    }

    /// Lines about refused requests not logged (more than
    /// ``maximumLogLinesPerSecond`` came in a second).
    public var logLinesLeftOut: Int { logBudget.leftOutInAll }

    /// The log's clock in seconds (a fixed time in tests).
    var logNow: Double { logTime ?? clock.now.seconds }

    /// Logs a line about a refused request (`.warning`) within the budget.
    func report(_ line: String) {
        for admitted in logBudget.admit(line, at: logNow) { log(.warning, admitted) }
    }

    /// Logs the count of lines left out once their second is over (or at
    /// once with `force`).
    func flushLog(force: Bool = false) {
        if let count = logBudget.summary(at: logNow, force: force) { log(.warning, count) }
    }

    /// Gives one line to `CodecLog` under ``logSubsystem``.
    func log(_ level: LogLevel, _ line: String) {
        CodecLog.log(level, subsystem: logSubsystem, line)
        logObserver?(LogMessage(level: level, subsystem: logSubsystem, message: line))
    }
}
