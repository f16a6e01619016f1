import CFFmpeg
import MediaCore
import PixelTransfer

/// The repacking a hardware decoder's pictures go through on their way to a
/// planar output (NV12 → I420, P010 → I010: what `codecs decode -o out.y4m`
/// does to every picture a GPU delivers), through `PixelTransferSession`
/// exactly as `DecompressionSession` calls it, beside libswscale converting
/// the same frames into the same buffers (its fastest of three flag sets).
func benchmarkRepacking(quick: Bool, rounds: Int, report: Report) throws {
    let sizes = quick ? [(1280, 720)] : [(1280, 720), (1920, 1080)]
    let pairs: [(PixelFormat, PixelFormat)] = [(.nv12, .i420), (.p010, .i010)]
    let count = quick ? 10 : 30
    for (width, height) in sizes {
        for (from, to) in pairs {
            let sources = try (0..<count).map { index in try patternBuffer(width, height, from, seed: index) }
            let destinations = try (0..<count).map { _ in try PixelBuffer(width: width, height: height, format: to) }
            let transfer = PixelTransferSession()
            let scalers = try [SWS_POINT, SWS_FAST_BILINEAR, SWS_BICUBIC].map { flags in
                try BenchScaler(width: width, height: height, from: from, to: to, flags: flags)
            }
            // libswscale's best flag set for this pair, then the same
            // number of interleaved runs for it and for ours.
            let scaler = scalers.min { a, b in
                fastest(2) { for (s, d) in zip(sources, destinations) { a.convert(s, into: d) } }
                    < fastest(2) { for (s, d) in zip(sources, destinations) { b.convert(s, into: d) } }
            }!
            let (bestOurs, bestReference) = try interleaved(max(rounds, 2) * 4) {
                for (source, destination) in zip(sources, destinations) {
                    try transfer.transfer(source, into: destination)
                }
            } reference: {
                for (source, destination) in zip(sources, destinations) { scaler.convert(source, into: destination) }
            }
            let perFrame = 1e3 / Double(count)
            report.add(
                Figure(
                    name: "repack \(from)→\(to) \(height)p", ours: bestOurs * perFrame,
                    reference: bestReference * perFrame, referenceName: "libswscale sws_scale (fastest flags)",
                    unit: "ms/frame", higherIsBetter: false, target: "≤ libswscale"))
        }
    }
}

/// A picture of `format` with samples that vary across the frame (10-bit
/// ones in the bits the layout uses).
private func patternBuffer(_ width: Int, _ height: Int, _ format: PixelFormat, seed: Int) throws -> PixelBuffer {
    let buffer = try PixelBuffer(width: width, height: height, format: format)
    for plane in 0..<buffer.planeCount {
        buffer.withUnsafeMutableBytes(ofPlane: plane) { bytes, stride in
            var state = UInt32(truncatingIfNeeded: seed &* 2_654_435_761 &+ plane &+ 1)
            if format.bytesPerSample == 1 {
                for index in bytes.indices {
                    state = state &* 1_103_515_245 &+ 12345
                    bytes[index] = UInt8(truncatingIfNeeded: state >> 16)
                }
            } else {
                let words = bytes.count / 2
                for index in 0..<words {
                    state = state &* 1_103_515_245 &+ 12345
                    let value = UInt16(truncatingIfNeeded: state >> 16) & 0x3FF
                    bytes.storeBytes(of: format == .p010 ? value << 6 : value, toByteOffset: 2 * index, as: UInt16.self)
                }
            }
            _ = stride
        }
    }
    return buffer
}

/// libswscale called directly: one context, the planes of our buffers.
private final class BenchScaler {
    private let context: OpaquePointer

    init(width: Int, height: Int, from: PixelFormat, to: PixelFormat, flags: Int32) throws {
        guard
            let context = sws_getContext(
                Int32(width), Int32(height), Self.avFormat(from), Int32(width), Int32(height), Self.avFormat(to), flags,
                nil, nil, nil)
        else { throw MediaError.unsupported("libswscale has no \(from) → \(to) conversion") }
        self.context = context
    }

    deinit { sws_freeContext(context) }

    static func avFormat(_ format: PixelFormat) -> AVPixelFormat {
        switch format {
        case .nv12: AV_PIX_FMT_NV12
        case .i420: AV_PIX_FMT_YUV420P
        case .p010: AV_PIX_FMT_P010LE
        case .i010: AV_PIX_FMT_YUV420P10LE
        default: AV_PIX_FMT_NONE
        }
    }

    func convert(_ source: PixelBuffer, into destination: PixelBuffer) {
        var sourcePointers = [UnsafePointer<UInt8>?](repeating: nil, count: 4)
        var sourceStrides = [Int32](repeating: 0, count: 4)
        var destinationPointers = [UnsafeMutablePointer<UInt8>?](repeating: nil, count: 4)
        var destinationStrides = [Int32](repeating: 0, count: 4)
        for plane in 0..<source.planeCount {
            source.withUnsafeBytes(ofPlane: plane) { bytes, stride in
                sourcePointers[plane] = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
                sourceStrides[plane] = Int32(stride)
            }
        }
        for plane in 0..<destination.planeCount {
            destination.withUnsafeMutableBytes(ofPlane: plane) { bytes, stride in
                destinationPointers[plane] = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
                destinationStrides[plane] = Int32(stride)
            }
        }
        withExtendedLifetime((source, destination)) {
            _ = sws_scale(
                context, sourcePointers, sourceStrides, 0, Int32(source.height), destinationPointers,
                destinationStrides)
        }
    }
}
