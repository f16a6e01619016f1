// A two-column text table of labels and values, and the number formats
// the reports print.

/// Rows of labels and values, rendered with the labels padded to one width;
/// a section is a blank line and a heading.
public struct ReportTable: Sendable {
    private var rows: [Row] = []

    private struct Row: Sendable {
        var label: String
        var value: String
    }

    /// An empty table.
    public init() {}

    /// Adds the row `label`, `value`.
    public mutating func add(_ label: String, _ value: String) { rows.append(Row(label: label, value: value)) }

    /// Adds a section: a blank line, then `title`.
    public mutating func section(_ title: String) {
        rows += [Row(label: "", value: ""), Row(label: title, value: "")]
    }

    /// The rows, two spaces in, the values lined up after the longest label.
    public var rendered: String {
        let width = rows.filter { !$0.value.isEmpty }.map(\.label.count).max() ?? 0
        return rows.map { row in
            if row.value.isEmpty { return row.label }
            return "  " + row.label + String(repeating: " ", count: width - row.label.count) + "  " + row.value
        }.joined(separator: "\n")
    }

    /// `value` with `digits` digits after the point ("inf", "n/a" when not finite).
    public static func formatted(_ value: Double, digits: Int = 1) -> String {
        guard value.isFinite else { return value > 0 ? "inf" : "n/a" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        var text = String((value * scale).rounded() / scale)
        if let dot = text.firstIndex(of: ".") {
            let decimals = text.distance(from: dot, to: text.endIndex) - 1
            if digits == 0 {
                text = String(text[..<dot])
            } else if decimals < digits {
                text += String(repeating: "0", count: digits - decimals)
            }
        }
        return text
    }

    /// Seconds as milliseconds with one digit after the point.
    public static func milliseconds(_ seconds: Double) -> String { formatted(seconds * 1000) + " ms" }
}
