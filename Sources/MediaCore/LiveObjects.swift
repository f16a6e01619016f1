import Synchronization

/// Counts the C contexts and buffers alive right now, by kind, so tests can
/// prove that every one was released (`LiveObjects.count(.x264Encoder) == 0`).
///
/// Every `final class` that owns a C object increments its kind in `init` and
/// decrements it in `deinit`. The counters are one dictionary behind a
/// `Mutex`, so each update costs a lock and a dictionary update; they are
/// kept in release builds too, so leaks can be checked in benchmarks.
public enum LiveObjects {
    /// A kind of tracked object.
    public struct Kind: RawRepresentable, Sendable, Hashable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let pixelBuffer = Kind(rawValue: "PixelBuffer")
        public static let x264Encoder = Kind(rawValue: "x264Encoder")
        public static let x265Encoder = Kind(rawValue: "x265Encoder")
        public static let codecContext = Kind(rawValue: "AVCodecContext")
        public static let avFrame = Kind(rawValue: "AVFrame")
        public static let avPacket = Kind(rawValue: "AVPacket")
        public static let hwDevice = Kind(rawValue: "AVHWDeviceContext")
        public static let swsContext = Kind(rawValue: "SwsContext")
        public static let formatContext = Kind(rawValue: "AVFormatContext")
        public static let vaDisplay = Kind(rawValue: "VADisplay")
        public static let bsfContext = Kind(rawValue: "AVBSFContext")
    }

    private static let counts = Mutex<[Kind: Int]>([:])

    /// Records that one object of `kind` was created.
    public static func increment(_ kind: Kind) {
        counts.withLock { $0[kind, default: 0] += 1 }
    }

    /// Records that one object of `kind` was released.
    public static func decrement(_ kind: Kind) {
        counts.withLock { $0[kind, default: 0] -= 1 }
    }

    /// The number of objects of `kind` alive now.
    public static func count(_ kind: Kind) -> Int {
        counts.withLock { $0[kind, default: 0] }
    }

    /// Every kind with a non-zero count.
    public static func snapshot() -> [Kind: Int] {
        counts.withLock { $0.filter { $0.value != 0 } }
    }
}
