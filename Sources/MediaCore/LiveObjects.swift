import Synchronization

/// Counts the C contexts and buffers alive right now, by kind, so tests can
/// prove that every one was released (`LiveObjects.count(.x264Encoder) == 0`).
///
/// Every `final class` that owns a C object increments its kind in `init` and
/// decrements it in `deinit`. The counters are one dictionary behind a
/// `Mutex`, so each update costs a lock and a dictionary update — in debug
/// builds only: in release builds (``isCounting`` false) the updates compile
/// to nothing and every count reads 0. Package-internal: tests, the `codecs`
/// tool and the benchmarks of this package read it; applications do not.
package enum LiveObjects {
    /// Whether this build counts (debug builds); release builds do not.
    #if DEBUG
        package static let isCounting = true
    #else
        package static let isCounting = false
    #endif

    /// A kind of tracked object.
    package struct Kind: RawRepresentable, Sendable, Hashable {
        package var rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        package static let pixelBuffer = Kind(rawValue: "PixelBuffer")
        package static let x264Encoder = Kind(rawValue: "x264Encoder")
        package static let x265Encoder = Kind(rawValue: "x265Encoder")
        package static let codecContext = Kind(rawValue: "AVCodecContext")
        package static let avFrame = Kind(rawValue: "AVFrame")
        package static let avPacket = Kind(rawValue: "AVPacket")
        package static let hwDevice = Kind(rawValue: "AVHWDeviceContext")
        package static let swsContext = Kind(rawValue: "SwsContext")
        package static let formatContext = Kind(rawValue: "AVFormatContext")
        package static let vaDisplay = Kind(rawValue: "VADisplay")
        package static let bsfContext = Kind(rawValue: "AVBSFContext")
    }

    private static let counts = Mutex<[Kind: Int]>([:])

    /// Records that one object of `kind` was created.
    @inline(__always)
    package static func increment(_ kind: Kind) {
        guard isCounting else { return }
        counts.withLock { $0[kind, default: 0] += 1 }
    }

    /// Records that one object of `kind` was released.
    @inline(__always)
    package static func decrement(_ kind: Kind) {
        guard isCounting else { return }
        counts.withLock { $0[kind, default: 0] -= 1 }
    }

    /// The number of objects of `kind` alive now.
    package static func count(_ kind: Kind) -> Int {
        counts.withLock { $0[kind, default: 0] }
    }

    /// Every kind with a non-zero count.
    package static func snapshot() -> [Kind: Int] {
        counts.withLock { $0.filter { $0.value != 0 } }
    }
}
