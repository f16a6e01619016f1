import Foundation
import MediaCore

/// Builds Y4M streams in memory for the reader and writer tests.
enum Y4MTestData {
    /// A stream with `header` (without newline) and `frames` frames of
    /// deterministic bytes, each frame `frameBytes` long.
    static func stream(header: String, frameBytes: Int, frames: Int, frameLine: String = "FRAME") -> Data {
        var data = Data((header + "\n").utf8)
        for index in 0..<frames {
            data.append(contentsOf: Array((frameLine + "\n").utf8))
            data.append(contentsOf: (0..<frameBytes).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ index &* 101 &+ 7) })
        }
        return data
    }

    /// The packed size of one 4:2:0 frame.
    static func frameBytes(width: Int, height: Int, tenBit: Bool = false) -> Int {
        (width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)) * (tenBit ? 2 : 1)
    }
}
