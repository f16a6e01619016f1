import MediaCore

/// The stream header of a YUV4MPEG2 (`.y4m`) file: picture size, frame rate,
/// interlacing, pixel aspect ratio, color space and comments.
///
/// A Y4M file is one text line `YUV4MPEG2 W1280 H720 F30:1 Ip A1:1 C420jpeg`
/// followed by frames, each a `FRAME` line and the planes packed without
/// padding. Tags are single letters followed by their value:
///
/// | tag | meaning | here |
/// |---|---|---|
/// | `W`, `H` | width, height | required, 1…16384 |
/// | `F` | frame rate `num:den` | ``frameRate``; `0:0` means unknown |
/// | `I` | interlacing `p`, `t`, `b`, `m` | ``interlacing`` |
/// | `A` | pixel aspect `num:den` | ``pixelAspect``; `0:0` means unknown |
/// | `C` | color space | see below |
/// | `X` | application comment | kept in ``comments`` |
///
/// The `C` values are FFmpeg's (`libavformat/yuv4mpeg*.c`), read and
/// written for every planar Y'CbCr `PixelFormat`:
///
/// | `C` | format | | `C` | format | | `C` | format |
/// |---|---|---|---|---|---|---|---|
/// | `420jpeg`, `420paldv`, `420mpeg2`, `420` | `.i420` | | `420p10` | `.i010` | | `420p12` | `.i012` |
/// | `422` | `.i422` | | `422p10` | `.i210` | | `422p12` | `.i212` |
/// | `444` | `.i444` | | `444p10` | `.i410` | | `444p12` | `.i412` |
/// | `mono` | `.gray` | | `mono10` | `.gray10` | | `mono12` | `.gray12` |
///
/// A header without `C` is 4:2:0 8-bit. Colour spaces no pixel format covers
/// (`411`, `444alpha`, 9-, 14- and 16-bit) and unknown tags are rejected with
/// an error naming the tag. FFmpeg's own writer asks for `-strict -1` before
/// it writes the 10- and 12-bit tags.
///
/// A header read from a file remembers the order of its tags, so that
/// ``Y4MWriter`` writes the same bytes back; a header made in code is
/// written in the usual order `W H F I A C X…`.
public struct Y4MHeader: Sendable, Hashable {
    /// The `I` tag: how the frames were scanned.
    public enum Interlacing: Character, Sendable, Hashable {
        /// `Ip`: progressive.
        case progressive = "p"
        /// `It`: interlaced, top field first.
        case topFieldFirst = "t"
        /// `Ib`: interlaced, bottom field first.
        case bottomFieldFirst = "b"
        /// `Im`: mixed; frames say for themselves.
        case mixed = "m"
    }

    /// Picture width in pixels (`W`).
    public var width: Int
    /// Picture height in pixels (`H`).
    public var height: Int
    /// Frames per second as a fraction (`F`); `(0, 0)` when unknown.
    public var frameRate: (numerator: Int, denominator: Int)
    /// The layout of each frame: a planar Y'CbCr format (`PixelFormat.isPlanarYCbCr`).
    public var pixelFormat: PixelFormat
    /// The `I` tag, or nil when absent.
    public var interlacing: Interlacing?
    /// The `A` tag (pixel aspect ratio), or nil when absent; `(0, 0)` means unknown.
    public var pixelAspect: (numerator: Int, denominator: Int)?
    /// The `C` tag's value without the `C` (`"420jpeg"`), or nil when absent.
    /// Nil with `.i420` is plain 4:2:0; other formats are written with their
    /// tag (`.i010` as `C420p10`, `.gray` as `Cmono`).
    public var colorSpaceTag: String?
    /// The `X` tags' values without the `X` (`"YSCSS=420JPEG"`), in order.
    public var comments: [String]

    /// The tag letters in the order they appeared in the file (`X` once per
    /// comment); empty for a header made in code.
    public internal(set) var tagOrder: [Character] = []

    /// Creates a header for frames of `width × height` in `pixelFormat`
    /// (a planar Y'CbCr format).
    public init(
        width: Int, height: Int, frameRate: (numerator: Int, denominator: Int) = (30, 1),
        pixelFormat: PixelFormat = .i420, interlacing: Interlacing? = nil,
        pixelAspect: (numerator: Int, denominator: Int)? = nil, colorSpaceTag: String? = nil,
        comments: [String] = []
    ) {
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.pixelFormat = pixelFormat
        self.interlacing = interlacing
        self.pixelAspect = pixelAspect
        self.colorSpaceTag = colorSpaceTag
        self.comments = comments
    }

    /// The duration of one frame (`denominator / numerator` seconds), or
    /// `MediaTime/invalid` when the rate is unknown or does not fit.
    public var frameDuration: MediaTime {
        guard frameRate.numerator > 0, frameRate.denominator > 0, frameRate.numerator <= Int32.max else {
            return .invalid
        }
        return MediaTime(value: Int64(frameRate.denominator), timescale: Int32(frameRate.numerator))
    }

    /// The bytes of one frame's pixels (without the `FRAME` line).
    public var frameByteCount: Int {
        var total = 0
        for plane in 0..<pixelFormat.planeCount {
            let g = pixelFormat.planeGeometry(plane, width: width, height: height)
            total += g.rowBytes * g.height
        }
        return total
    }

    /// Whether both headers have the same fields and comments.
    public static func == (lhs: Y4MHeader, rhs: Y4MHeader) -> Bool {
        lhs.width == rhs.width && lhs.height == rhs.height && lhs.frameRate == rhs.frameRate
            && lhs.pixelFormat == rhs.pixelFormat && lhs.interlacing == rhs.interlacing
            && lhs.pixelAspect?.numerator == rhs.pixelAspect?.numerator
            && lhs.pixelAspect?.denominator == rhs.pixelAspect?.denominator
            && lhs.colorSpaceTag == rhs.colorSpaceTag && lhs.comments == rhs.comments
    }

    /// Hashes the same fields that equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(width)
        hasher.combine(height)
        hasher.combine(frameRate.numerator)
        hasher.combine(frameRate.denominator)
        hasher.combine(pixelFormat)
        hasher.combine(interlacing)
        hasher.combine(pixelAspect?.numerator)
        hasher.combine(pixelAspect?.denominator)
        hasher.combine(colorSpaceTag)
        hasher.combine(comments)
    }

    /// The stream signature that opens every Y4M file.
    static let signature = "YUV4MPEG2"
    /// The longest header line accepted, to bound memory on garbage input.
    static let maximumHeaderLength = 65536

    /// The pixel format a `C` tag value stands for, or nil when unsupported.
    static func pixelFormat(forColorSpace tag: String?) -> PixelFormat? {
        switch tag {
        case nil, "420jpeg", "420paldv", "420mpeg2", "420": return .i420
        default: return PixelFormat.allCases.first { $0 != .i420 && colorSpaceTag(for: $0) == tag }
        }
    }

    /// The `C` value FFmpeg writes for `format` (`"422p10"`, `"mono"`), or
    /// nil when Y4M cannot carry the format (NV12, P010, BGRA).
    public static func colorSpaceTag(for format: PixelFormat) -> String? {
        guard format.isPlanarYCbCr, let chroma = format.chromaSubsampling else { return nil }
        if format == .i420 { return "420jpeg" }
        let sampling: String
        switch chroma {
        case .yuv420: sampling = "420"
        case .yuv422: sampling = "422"
        case .yuv444: sampling = "444"
        case .monochrome: sampling = "mono"
        }
        switch format.bitDepth {
        case 8: return sampling
        case let depth: return sampling + (chroma == .monochrome ? "" : "p") + String(depth)
        }
    }

    /// Parses the header line `line` (without its newline).
    ///
    /// - Throws: ``MediaError/Code/invalidData`` for a missing signature, a
    ///   malformed or missing value; ``MediaError/Code/unsupported`` for a
    ///   color space or tag we do not handle. Each message names the tag.
    init(parsing line: String) throws(MediaError) {
        var tokens = line.split(separator: " ", omittingEmptySubsequences: true)
        guard tokens.first == Substring(Self.signature) else {
            let start = String(line.prefix(16))
            throw .invalidData("not a Y4M stream: header starts with \"\(start)\", expected \"\(Self.signature)\"")
        }
        tokens.removeFirst()
        var width: Int?
        var height: Int?
        var frameRate: (numerator: Int, denominator: Int)?
        var interlacing: Interlacing?
        var pixelAspect: (numerator: Int, denominator: Int)?
        var colorSpace: String?
        var comments: [String] = []
        var order: [Character] = []
        for token in tokens {
            let tag = token.first!
            let value = String(token.dropFirst())
            if tag != "X", order.contains(tag) {
                throw .invalidData("Y4M header repeats tag \(tag) (\"\(token)\")")
            }
            order.append(tag)
            switch tag {
            case "W":
                width = try Self.dimension(value, tag: "W")
            case "H":
                height = try Self.dimension(value, tag: "H")
            case "F":
                frameRate = try Self.ratio(value, tag: "F")
            case "A":
                pixelAspect = try Self.ratio(value, tag: "A")
            case "I":
                guard value.count == 1, let mode = Interlacing(rawValue: value.first!) else {
                    throw .invalidData("Y4M interlace tag \"I\(value)\": expected Ip, It, Ib or Im")
                }
                interlacing = mode
            case "C":
                guard Self.pixelFormat(forColorSpace: value) != nil else {
                    throw .unsupported(
                        "Y4M color space \"C\(value)\" is not supported: only C420jpeg, C420paldv, C420mpeg2, C420, "
                            + "C422, C444, Cmono and their 10- and 12-bit forms (C420p10, C422p12, Cmono10 …) are"
                    )
                }
                colorSpace = value
            case "X":
                comments.append(value)
            default:
                throw .unsupported("Y4M header tag \"\(token)\" is not supported (known tags: W H F I A C X)")
            }
        }
        guard let width else { throw .invalidData("Y4M header has no width tag W") }
        guard let height else { throw .invalidData("Y4M header has no height tag H") }
        let format = Self.pixelFormat(forColorSpace: colorSpace)!
        try format.validate(width: width, height: height)
        self.init(
            width: width, height: height, frameRate: frameRate ?? (0, 0), pixelFormat: format,
            interlacing: interlacing, pixelAspect: pixelAspect, colorSpaceTag: colorSpace, comments: comments)
        self.tagOrder = order
    }

    private static func dimension(_ text: String, tag: Character) throws(MediaError) -> Int {
        guard let number = Int(text), number >= 1, number <= 16384 else {
            throw .invalidData("Y4M tag \"\(tag)\(text)\": expected an integer from 1 to 16384")
        }
        return number
    }

    private static func ratio(_ text: String, tag: Character) throws(MediaError) -> (numerator: Int, denominator: Int) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), n >= 0, d >= 0,
            n <= Int(Int32.max), d <= Int(Int32.max), (n == 0) == (d == 0)
        else {
            throw .invalidData(
                "Y4M tag \"\(tag)\(text)\": expected num:den with both positive (or 0:0 for unknown), at most \(Int32.max)"
            )
        }
        return (n, d)
    }

    /// The header line including its newline, tags in ``tagOrder`` first and
    /// any set but unlisted tags after, in the order `W H F I A C X` (an
    /// unlisted `F0:0` is left out: an absent `F` reads as unknown).
    ///
    /// - Throws: ``MediaError/Code/invalidArgument`` when the pixel format is
    ///   not one Y4M can carry here or disagrees with ``colorSpaceTag``, or a
    ///   comment holds a space or line break.
    func serialized() throws(MediaError) -> String {
        guard let formatTag = Self.colorSpaceTag(for: pixelFormat) else {
            throw .invalidArgument(
                "Y4M pixel format \(pixelFormat): only planar Y'CbCr (i420, i422, i444, gray and their 10- and "
                    + "12-bit forms) can be written")
        }
        var colorSpace = colorSpaceTag
        if let tag = colorSpace {
            guard Self.pixelFormat(forColorSpace: tag) == pixelFormat else {
                throw .invalidArgument("Y4M color space C\(tag) does not describe pixel format \(pixelFormat)")
            }
        } else if pixelFormat != .i420 {
            colorSpace = formatTag
        }
        try pixelFormat.validate(width: width, height: height)
        for text in comments + [colorSpace ?? ""] where text.contains(where: { $0 == " " || $0.isNewline }) {
            throw .invalidArgument("Y4M tag value \"\(text)\" must not contain spaces or line breaks")
        }

        func value(of tag: Character) -> String? {
            switch tag {
            case "W": return "W\(width)"
            case "H": return "H\(height)"
            case "F": return "F\(frameRate.numerator):\(frameRate.denominator)"
            case "I": return interlacing.map { "I\($0.rawValue)" }
            case "A": return pixelAspect.map { "A\($0.numerator):\($0.denominator)" }
            case "C": return colorSpace.map { "C\($0)" }
            default: return nil
            }
        }
        var line = Self.signature
        var written: Set<Character> = []
        var commentIndex = 0
        for tag in tagOrder {
            if tag == "X" {
                if commentIndex < comments.count {
                    line += " X" + comments[commentIndex]
                    commentIndex += 1
                }
            } else if let text = value(of: tag) {
                line += " " + text
            }
            written.insert(tag)
        }
        for tag: Character in ["W", "H", "F", "I", "A", "C"] where !written.contains(tag) {
            // An unknown rate (0:0) is written only where the source had it.
            if tag == "F" && frameRate == (0, 0) { continue }
            if let text = value(of: tag) { line += " " + text }
        }
        while commentIndex < comments.count {
            line += " X" + comments[commentIndex]
            commentIndex += 1
        }
        return line + "\n"
    }
}
