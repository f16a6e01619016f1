import CFFmpeg
import MediaCore

/// One libswscale context (`SwsContext`) for one source and destination
/// geometry, owned by this object and freed in `deinit`.
package final class Scaler {
    /// How pixels are resampled when the size changes.
    package enum Resampling: Hashable, Sendable {
        case nearest, bilinear, bicubic
    }

    package struct Key: Hashable {
        package var sourceWidth: Int
        package var sourceHeight: Int
        package var sourceFormat: LibavPixelFormat
        package var destinationWidth: Int
        package var destinationHeight: Int
        package var destinationFormat: LibavPixelFormat
        package var resampling: Resampling

        package init(
            sourceWidth: Int, sourceHeight: Int, sourceFormat: LibavPixelFormat, destinationWidth: Int,
            destinationHeight: Int, destinationFormat: LibavPixelFormat, resampling: Resampling
        ) {
            self.sourceWidth = sourceWidth
            self.sourceHeight = sourceHeight
            self.sourceFormat = sourceFormat
            self.destinationWidth = destinationWidth
            self.destinationHeight = destinationHeight
            self.destinationFormat = destinationFormat
            self.resampling = resampling
        }
    }

    package let key: Key
    private let context: OpaquePointer

    package init(key: Key) throws(MediaError) {
        var flags: Int32
        switch key.resampling {
        case .nearest: flags = CFFmpeg_SWS_POINT()
        case .bilinear: flags = CFFmpeg_SWS_BILINEAR()
        case .bicubic: flags = CFFmpeg_SWS_BICUBIC()
        }
        // Accurate rounding and full chroma interpolation keep RGB conversions
        // close to the exact BT.601 result.
        flags |= CFFmpeg_SWS_ACCURATE_RND() | CFFmpeg_SWS_FULL_CHR_H_INT()
        HardwareLog.installLogCallback()
        guard
            let context = sws_getContext(
                Int32(key.sourceWidth), Int32(key.sourceHeight), key.sourceFormat.avPixelFormat,
                Int32(key.destinationWidth), Int32(key.destinationHeight), key.destinationFormat.avPixelFormat, flags,
                nil, nil, nil)
        else {
            throw .unsupported(
                "libswscale cannot convert \(key.sourceFormat) \(key.sourceWidth)x\(key.sourceHeight) to "
                    + "\(key.destinationFormat) \(key.destinationWidth)x\(key.destinationHeight)")
        }
        self.key = key
        self.context = context
        LiveObjects.increment(.swsContext)
    }

    deinit {
        sws_freeContext(context)
        LiveObjects.decrement(.swsContext)
    }

    /// Converts `height` rows of `source` planes into `destination` planes.
    package func scale(
        source: [(base: UnsafeRawPointer, stride: Int)], height: Int,
        destination: [(UnsafeMutableRawPointer, Int)]
    ) throws(MediaError) {
        var sourcePointers = [UnsafePointer<UInt8>?](repeating: nil, count: 4)
        var sourceStrides = [Int32](repeating: 0, count: 4)
        for (index, plane) in source.prefix(4).enumerated() {
            sourcePointers[index] = plane.base.assumingMemoryBound(to: UInt8.self)
            sourceStrides[index] = Int32(plane.stride)
        }
        var destinationPointers = [UnsafeMutablePointer<UInt8>?](repeating: nil, count: 4)
        var destinationStrides = [Int32](repeating: 0, count: 4)
        for (index, plane) in destination.prefix(4).enumerated() {
            destinationPointers[index] = plane.0.assumingMemoryBound(to: UInt8.self)
            destinationStrides[index] = Int32(plane.1)
        }
        let rows = sws_scale(
            context, sourcePointers, sourceStrides, 0, Int32(height), destinationPointers, destinationStrides)
        guard rows > 0 else {
            throw MediaError(
                .backendFailure, "libswscale produced no rows (sws_scale returned \(rows))", library: "libswscale",
                status: Int(rows))
        }
    }
}
