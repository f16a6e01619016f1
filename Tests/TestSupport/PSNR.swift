import Foundation

/// PSNR in dB between two arrays of 8-bit samples of the same length (peak
/// 255); infinite when they are equal.
public func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
    precondition(a.count == b.count, "PSNR needs arrays of one length: \(a.count) vs \(b.count)")
    var sum = 0.0
    for index in a.indices {
        let difference = Double(Int(a[index]) - Int(b[index]))
        sum += difference * difference
    }
    if sum == 0 { return .infinity }
    return 10 * log10(255 * 255 / (sum / Double(a.count)))
}

/// The worst frame's PSNR of `count` packed 8-bit I420 frames, back to back
/// in `decoded`, against `original(index)` (packed I420 of the same size).
///
/// A frame's PSNR weighs luma and chroma 4:2: (4 × luma + 2 × chroma) / 6,
/// with both chroma planes measured together.
public func worstI420PSNR(decoded: Data, width: Int, height: Int, count: Int, original: (Int) -> [UInt8])
    -> Double
{
    let lumaSize = width * height
    let frameSize = lumaSize * 3 / 2
    var worst = Double.infinity
    for index in 0..<count {
        let start = decoded.startIndex + index * frameSize
        let picture = [UInt8](decoded[start..<start + frameSize])
        let reference = original(index)
        let luma = psnr(Array(reference[..<lumaSize]), Array(picture[..<lumaSize]))
        let chroma = psnr(Array(reference[lumaSize...]), Array(picture[lumaSize...]))
        worst = min(worst, (4 * luma + 2 * chroma) / 6)
    }
    return worst
}
