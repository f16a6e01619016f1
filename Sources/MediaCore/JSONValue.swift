// A JSON value and its text (RFC 8259), for reports and statistics files.

/// A JSON value whose object keys keep their insertion order, so that
/// `--json` output is stable for scripts and diffs.
public enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// `text` as a JSON string, or null.
    public static func optional(_ text: String?) -> JSONValue {
        text.map { .string($0) } ?? .null
    }

    /// An object whose members are `members` in the order of their keys.
    public static func sorted(_ members: [String: JSONValue]) -> JSONValue {
        .object(members.keys.sorted().map { ($0, members[$0]!) })
    }

    /// The value as JSON text, indented by two spaces a level; a number that
    /// is not finite (JSON has none) is written as `null`.
    public func serialized(indent: Int = 0) -> String {
        var output = ""
        write(to: &output, indent: indent)
        return output
    }

    private func write(to output: inout String, indent: Int) {
        let padding = String(repeating: " ", count: indent + 2)
        let closing = String(repeating: " ", count: indent)
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value): output += String(value)
        case .double(let value):
            // JSON has no infinity or NaN.
            output += value.isFinite ? String(value) : "null"
        case .string(let value): JSONValue.writeString(value, to: &output)
        case .array(let items):
            guard !items.isEmpty else {
                output += "[]"
                return
            }
            output += "[\n"
            for (index, item) in items.enumerated() {
                output += padding
                item.write(to: &output, indent: indent + 2)
                output += index + 1 < items.count ? ",\n" : "\n"
            }
            output += closing + "]"
        case .object(let members):
            guard !members.isEmpty else {
                output += "{}"
                return
            }
            output += "{\n"
            for (index, (key, value)) in members.enumerated() {
                output += padding
                JSONValue.writeString(key, to: &output)
                output += ": "
                value.write(to: &output, indent: indent + 2)
                output += index + 1 < members.count ? ",\n" : "\n"
            }
            output += closing + "}"
        }
    }

    /// Writes `text` quoted, escaping what RFC 8259 section 7 requires.
    private static func writeString(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
