import MediaCore

/// A small command-line parser shared by the `codecs` subcommands.
///
/// Options are `--name value`, `--name=value` or `-x value`; flags are
/// `--name`. Anything else is positional. Unknown or malformed options are
/// reported with the option's name; the tool then exits with status 2.
struct Arguments {
    private(set) var positional: [String] = []
    private var values: [String: String] = [:]
    private var allValues: [String: [String]] = [:]
    private var flags: Set<String> = []
    private var consumed: Set<String> = []

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    /// Parses `arguments`; `valueOptions` lists the options that take a value
    /// (long names without dashes, or one-letter short names).
    init(_ arguments: [String], valueOptions: Set<String>, flagOptions: Set<String>) throws(UsageError) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "-" || !argument.hasPrefix("-") {
                positional.append(argument)
                continue
            }
            var name = String(argument.drop(while: { $0 == "-" }))
            var inlineValue: String? = nil
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if valueOptions.contains(name) {
                if let inlineValue {
                    values[name] = inlineValue
                } else {
                    guard index < arguments.count else {
                        throw UsageError(description: "option \(argument) needs a value")
                    }
                    values[name] = arguments[index]
                    index += 1
                }
                allValues[name, default: []].append(values[name]!)
            } else if flagOptions.contains(name) {
                guard inlineValue == nil else {
                    throw UsageError(description: "option --\(name) takes no value")
                }
                flags.insert(name)
            } else {
                throw UsageError(description: "unknown option \(argument)")
            }
        }
    }

    /// The value of option `name`, if given (the last, when given more than once).
    func value(_ name: String) -> String? { values[name] }

    /// Every value of option `name`, in order (a repeatable option).
    func values(_ name: String) -> [String] { allValues[name] ?? [] }

    /// Whether flag `name` was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `name` as an integer in `range`, or `defaultValue` when absent.
    func integer(_ name: String, in range: ClosedRange<Int>, default defaultValue: Int? = nil) throws(UsageError)
        -> Int?
    {
        guard let text = values[name] else { return defaultValue }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(
                description: "--\(name) \(text): expected an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// The value of `name`, which must be one of `choices`.
    func choice(_ name: String, _ choices: [String], default defaultValue: String) throws(UsageError) -> String {
        guard let text = values[name] else { return defaultValue }
        guard choices.contains(text) else {
            throw UsageError(description: "--\(name) \(text): expected one of \(choices.joined(separator: ", "))")
        }
        return text
    }

    /// `--codec auto|h264|hevc` for H.264/HEVC input: nil for `auto` or when
    /// absent (the extension or the stream then tells).
    func inputCodec() throws(UsageError) -> CodecType? {
        CodecType(rawValue: try choice("codec", ["auto", "h264", "hevc"], default: "auto"))
    }

    /// Parses a bit rate such as `2M`, `800k` or `1500000` into bits per second.
    static func bitRate(_ text: String) -> Int? {
        let lower = text.lowercased()
        var multiplier = 1.0
        var digits = Substring(lower)
        if lower.hasSuffix("k") {
            multiplier = 1e3
            digits = lower.dropLast()
        } else if lower.hasSuffix("m") {
            multiplier = 1e6
            digits = lower.dropLast()
        }
        guard let number = Double(digits), number > 0, number * multiplier < 1e10 else { return nil }
        return Int(number * multiplier)
    }
}
