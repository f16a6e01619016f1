import MediaCore

/// A deterministic test clip: moving shapes over a drifting gradient, a band
/// of scrolling text-like glyphs and mild noise, at any size and length.
///
/// The same `(width, height, format, seed)` always gives the same pixels for
/// a frame index, on every machine: everything is integer arithmetic driven
/// by a splitmix64 generator seeded with `seed`. The demo, the tests and the
/// benchmarks share it so that their figures are comparable.
///
/// ```swift
/// let clip = SyntheticClip(width: 320, height: 240, frameCount: 30)
/// for index in 0..<clip.frameCount {
///     let frame = clip.frame(at: index)         // .i420 PixelBuffer
///     _ = clip.presentationTime(ofFrame: index) // index / 30 s
/// }
/// ```
///
/// Content, chosen to exercise an encoder the way camera video does without
/// being hard to compress: a smooth luma and chroma gradient that drifts a few
/// pixels a frame; rectangles (one with a checkerboard texture) and discs that
/// move on bouncing paths at whole-pixel speeds; a panel of 5×7 glyphs that
/// scrolls sideways; and noise of about ±1 code value (8-bit) that changes
/// every frame. x264 at its default CRF 23 keeps it at roughly 40 dB PSNR.
///
/// Formats: `.i420`, `.nv12` (8-bit) and `.i010`, `.p010` (10-bit; the
/// gradients then use all ten bits). Other formats are not produced.
///
/// Costs: frames are computed on demand, one row at a time, with a few integer
/// operations a sample (well over 100 frames a second at 1280×720 in release
/// builds). Nothing is cached between frames; ``render(frame:into:)`` reuses a
/// buffer, for instance one from a `PixelBufferPool`.
public struct SyntheticClip: Sendable {
    /// Picture width in pixels.
    public let width: Int
    /// Picture height in pixels.
    public let height: Int
    /// The number of frames in the clip.
    public let frameCount: Int
    /// Frames per second.
    public let frameRate: Int
    /// The pixel format of the frames.
    public let format: PixelFormat
    /// The generator's seed.
    public let seed: UInt64

    /// A shape that moves on a bouncing path; its outline is a table of
    /// horizontal spans, one per row.
    private struct Shape: Sendable {
        var width: Int
        var height: Int
        var x0: Int
        var y0: Int
        var dx: Int
        var dy: Int
        /// Luma and chroma in 10-bit code values.
        var y: Int32
        var u: Int32
        var v: Int32
        var checkered: Bool
        /// For each row, the first and one-past-last column inside the shape.
        var spans: [(start: Int, end: Int)]
    }

    private let shapes: [Shape]
    /// Noise in 10-bit code values, −7…7, indexed with a per-row offset.
    private let noise: [Int32]
    /// 64 glyphs of 7 rows, 5 bits a row (bit 4 is the leftmost column).
    private let glyphs: [UInt8]
    /// The glyph index of each cell of each text line, `textColumns` a line.
    private let text: [UInt8]
    private let textColumns: Int
    private let textLines: Int

    private static let noiseMask = 0xFFFF
    private static let cellWidth = 6
    private static let cellHeight = 10

    /// Creates a clip of `frameCount` frames of `width × height` in `format`.
    ///
    /// Preconditions: the size is valid for `format` (1…16384 each way),
    /// `frameCount ≥ 0`, `frameRate ≥ 1`, and `format` is a 4:2:0 one.
    public init(
        width: Int, height: Int, frameCount: Int, frameRate: Int = 30, format: PixelFormat = .i420,
        seed: UInt64 = 1
    ) {
        precondition(width >= 1 && width <= 16384 && height >= 1 && height <= 16384, "size \(width)x\(height)")
        precondition(frameCount >= 0, "frameCount \(frameCount) must not be negative")
        precondition(frameRate >= 1, "frameRate \(frameRate) must be at least 1")
        precondition(format.isChromaSubsampled, "SyntheticClip produces 4:2:0 formats only, not \(format)")
        self.width = width
        self.height = height
        self.frameCount = frameCount
        self.frameRate = frameRate
        self.format = format
        self.seed = seed

        var random = SplitMix64(seed: seed)

        // Triangular noise, the difference of two uniform draws of 0…7:
        // a standard deviation of about 3 ten-bit (0.8 eight-bit) code values.
        noise = (0...Self.noiseMask).map { _ in
            let bits = random.next()
            return Int32(bits & 7) - Int32((bits >> 8) & 7)
        }

        var glyphTable: [UInt8] = []
        glyphTable.reserveCapacity(64 * 7)
        for _ in 0..<64 {
            let bits = random.next()
            for row in 0..<7 {
                // About half the pixels set; the outer rows lighter, like letters.
                var mask = UInt8(truncatingIfNeeded: bits >> UInt64(row * 5)) & 0x1F
                if row == 0 || row == 6 { mask &= UInt8(truncatingIfNeeded: bits >> 40) & 0x1F }
                glyphTable.append(mask)
            }
        }
        glyphs = glyphTable

        textColumns = max(8, (width / Self.cellWidth) * 2)
        textLines = max(1, min(4, height / 60))
        text = (0..<(textColumns * textLines)).map { _ in
            let bits = random.next()
            // One cell in six is a space so the band reads like words.
            return bits % 6 == 0 ? 255 : UInt8(truncatingIfNeeded: bits >> 8) & 63
        }

        let unit = max(2, min(width, height))
        var made: [Shape] = []
        for index in 0..<5 {
            let isDisc = index % 2 == 1
            let sw = max(1, unit * (12 + Int(random.next() % 14)) / 100)
            let sh = isDisc ? sw : max(1, unit * (10 + Int(random.next() % 12)) / 100)
            var spans: [(start: Int, end: Int)] = []
            spans.reserveCapacity(sh)
            for row in 0..<sh {
                if isDisc {
                    // Integer disc: columns whose centre is within the radius.
                    let r2 = sw * sw
                    let dy = 2 * row + 1 - sh
                    var half = 0
                    while (2 * half + 2) * (2 * half + 2) + dy * dy <= r2 { half += 1 }
                    let centre = sw / 2
                    spans.append((max(0, centre - half), min(sw, centre + half + (sw & 1))))
                } else {
                    spans.append((0, sw))
                }
            }
            func speed() -> Int {
                let magnitude = 1 + Int(random.next() % 4)
                return random.next() & 1 == 0 ? magnitude : -magnitude
            }
            let luma = Int32(120 + Int(random.next() % 780))
            made.append(
                Shape(
                    width: sw, height: sh,
                    x0: Int(random.next() % UInt64(max(1, width))), y0: Int(random.next() % UInt64(max(1, height))),
                    dx: speed(), dy: speed(), y: luma,
                    u: Int32(160 + Int(random.next() % 704)), v: Int32(160 + Int(random.next() % 704)),
                    checkered: index == 0, spans: spans))
        }
        shapes = made
    }

    /// The duration of one frame: `1 / frameRate` seconds.
    public var frameDuration: MediaTime { MediaTime(value: 1, timescale: Int32(clamping: frameRate)) }

    /// The presentation time of frame `index`: `index / frameRate` seconds.
    public func presentationTime(ofFrame index: Int) -> MediaTime {
        MediaTime(value: Int64(index), timescale: Int32(clamping: frameRate))
    }

    /// Frame `index` in a new buffer. Indexes past ``frameCount`` continue the
    /// motion; negative indexes are a precondition failure.
    public func frame(at index: Int) -> PixelBuffer {
        // The size was checked in init, so allocation cannot fail validation.
        let buffer = try! PixelBuffer(width: width, height: height, format: format)
        render(frame: index, into: buffer)
        return buffer
    }

    /// Draws frame `index` into `buffer`, which must have the clip's size and format.
    public func render(frame index: Int, into buffer: PixelBuffer) {
        precondition(index >= 0, "frame index \(index) must not be negative")
        precondition(
            buffer.width == width && buffer.height == height && buffer.format == format,
            "buffer \(buffer.width)x\(buffer.height) \(buffer.format) does not match clip \(width)x\(height) \(format)")
        let positions = shapes.map { shape in
            (
                x: Self.bounce(shape.x0 + shape.dx * index, range: width - shape.width),
                y: Self.bounce(shape.y0 + shape.dy * index, range: height - shape.height)
            )
        }
        renderLuma(frame: index, positions: positions, into: buffer)
        renderChroma(frame: index, positions: positions, into: buffer)
    }

    /// Position on a path that reflects at 0 and `range`.
    private static func bounce(_ position: Int, range: Int) -> Int {
        guard range > 0 else { return 0 }
        let period = 2 * range
        var m = position % period
        if m < 0 { m += period }
        return m <= range ? m : period - m
    }

    /// A triangle wave over `period` with values 0…`amplitude`.
    private static func triangle(_ x: Int, period: Int, amplitude: Int) -> Int32 {
        let half = max(1, period / 2)
        var m = x % (2 * half)
        if m < 0 { m += 2 * half }
        let t = m <= half ? m : 2 * half - m
        return Int32(t * amplitude / half)
    }

    private func renderLuma(frame t: Int, positions: [(x: Int, y: Int)], into buffer: PixelBuffer) {
        let w = width
        // Horizontal part of the background, shared by all rows of this frame.
        let columnTerm = (0..<w).map { Self.triangle(2 * $0 + 3 * t, period: 2 * w + 64, amplitude: 360) }
        let panelTop = height * 5 / 8
        let panelBottom = min(height, panelTop + textLines * Self.cellHeight + 2)
        let panelLeft = min(w, 8)
        let panelRight = max(panelLeft, w - 8)
        let scroll = 2 * t
        var rowNoise = SplitMix64(seed: seed ^ (UInt64(t) &* 0x9E37_79B9_7F4A_7C15))

        withUnsafeTemporaryAllocation(of: Int32.self, capacity: w) { row in
            columnTerm.withUnsafeBufferPointer { columns in
                noise.withUnsafeBufferPointer { noise in
                    for y in 0..<height {
                        let base = Int32(110 + y * 300 / height)
                        let noiseStart = Int(truncatingIfNeeded: rowNoise.next() & UInt64(Self.noiseMask))
                        for x in 0..<w {
                            row[x] = base &+ columns[x] &+ noise[(noiseStart &+ x) & Self.noiseMask]
                        }
                        if y >= panelTop && y < panelBottom && panelRight > panelLeft {
                            drawText(row: row, y: y - panelTop - 1, from: panelLeft, to: panelRight, scroll: scroll)
                        }
                        for (index, shape) in shapes.enumerated() {
                            let sy = y - positions[index].y
                            guard sy >= 0 && sy < shape.height else { continue }
                            let span = shape.spans[sy]
                            let start = max(0, positions[index].x + span.start)
                            let end = min(w, positions[index].x + span.end)
                            guard start < end else { continue }
                            if shape.checkered {
                                let px = positions[index].x
                                let rowPhase = (sy >> 2) & 1
                                for x in start..<end {
                                    row[x] = ((((x - px) >> 2) ^ rowPhase) & 1) == 0 ? shape.y : shape.y / 3
                                }
                            } else {
                                for x in start..<end { row[x] = shape.y }
                            }
                        }
                        store(UnsafeBufferPointer(row), count: w, plane: 0, row: y, step: 1, offset: 0, into: buffer)
                    }
                }
            }
        }
    }

    /// Draws one row of the glyph panel; `y` counts from the first text row.
    private func drawText(row: UnsafeMutableBufferPointer<Int32>, y: Int, from: Int, to: Int, scroll: Int) {
        let paper: Int32 = 860
        let ink: Int32 = 150
        let line = y / Self.cellHeight
        let glyphRow = y % Self.cellHeight
        guard y >= 0, line < textLines, glyphRow < 7 else {
            for x in from..<to { row[x] = paper }
            return
        }
        // Each line scrolls at its own speed so the motion is not uniform.
        let shift = scroll * (line + 1) + line * 17
        var cell = (from + shift) / Self.cellWidth
        var column = (from + shift) % Self.cellWidth
        var bits = glyphBits(line: line, cell: cell, row: glyphRow)
        for x in from..<to {
            row[x] = column < 5 && (bits >> (4 - column)) & 1 != 0 ? ink : paper
            column += 1
            if column == Self.cellWidth {
                column = 0
                cell += 1
                bits = glyphBits(line: line, cell: cell, row: glyphRow)
            }
        }
    }

    private func glyphBits(line: Int, cell: Int, row: Int) -> UInt8 {
        let glyph = text[line * textColumns + cell % textColumns]
        return glyph == 255 ? 0 : glyphs[Int(glyph) * 7 + row]
    }

    private func renderChroma(frame t: Int, positions: [(x: Int, y: Int)], into buffer: PixelBuffer) {
        let cw = (width + 1) / 2
        let ch = (height + 1) / 2
        let uColumns = (0..<cw).map { 412 + Self.triangle($0 + t, period: cw + 32, amplitude: 200) }
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: cw * 2) { scratch in
            let u = UnsafeMutableBufferPointer(rebasing: scratch[0..<cw])
            let v = UnsafeMutableBufferPointer(rebasing: scratch[cw..<(2 * cw)])
            for cy in 0..<ch {
                let vBase = 412 + Self.triangle(cy + t / 2, period: ch + 16, amplitude: 200)
                for x in 0..<cw {
                    u[x] = uColumns[x]
                    v[x] = vBase &+ Int32(truncatingIfNeeded: (x >> 3) & 7)
                }
                let y = 2 * cy
                for (index, shape) in shapes.enumerated() {
                    let sy = y - positions[index].y
                    guard sy >= 0 && sy < shape.height else { continue }
                    let span = shape.spans[sy]
                    let start = max(0, (positions[index].x + span.start) / 2)
                    let end = min(cw, (positions[index].x + span.end + 1) / 2)
                    guard start < end else { continue }
                    for x in start..<end {
                        u[x] = shape.u
                        v[x] = shape.v
                    }
                }
                if format.planeCount == 3 {
                    store(UnsafeBufferPointer(u), count: cw, plane: 1, row: cy, step: 1, offset: 0, into: buffer)
                    store(UnsafeBufferPointer(v), count: cw, plane: 2, row: cy, step: 1, offset: 0, into: buffer)
                } else {
                    store(UnsafeBufferPointer(u), count: cw, plane: 1, row: cy, step: 2, offset: 0, into: buffer)
                    store(UnsafeBufferPointer(v), count: cw, plane: 1, row: cy, step: 2, offset: 1, into: buffer)
                }
            }
        }
    }

    /// Writes `count` 10-bit values into `row` of `plane`, every `step`-th
    /// sample from `offset`, converted to the buffer's sample layout.
    private func store(
        _ values: UnsafeBufferPointer<Int32>, count: Int, plane: Int, row: Int, step: Int, offset: Int,
        into buffer: PixelBuffer
    ) {
        let format = self.format
        buffer.withUnsafeMutableBytes(ofPlane: plane) { bytes, stride in
            let start = bytes.baseAddress! + row * stride
            switch format {
            case .i010, .p010:
                let shift: UInt16 = format == .p010 ? 6 : 0
                let out = start.assumingMemoryBound(to: UInt16.self)
                for x in 0..<count {
                    let value = UInt16(truncatingIfNeeded: min(1023, max(0, values[x])))
                    out[x * step + offset] = (value << shift).littleEndian
                }
            default:
                let out = start.assumingMemoryBound(to: UInt8.self)
                if step == 1 {
                    for x in 0..<count {
                        out[x] = UInt8(truncatingIfNeeded: min(255, max(0, (values[x] &+ 2) >> 2)))
                    }
                } else {
                    for x in 0..<count {
                        out[x * step + offset] = UInt8(truncatingIfNeeded: min(255, max(0, (values[x] &+ 2) >> 2)))
                    }
                }
            }
        }
    }
}
