import FormatConv
import Foundation
import MediaCore

@testable import EncodeSession

/// Helpers for the encode tests: synthetic frames, Annex-B output and
/// decoding through the ffmpeg CLI.
enum EncodeTest {
    /// A deterministic moving picture: diagonal gradients that drift, a box
    /// that moves, and chroma ramps; smooth enough for ~40 dB at CRF 23.
    static func frame(_ index: Int, width: Int = 320, height: Int = 240, format: PixelFormat = .i420) -> PixelBuffer {
        let buffer = try! PixelBuffer(width: width, height: height, format: format)
        let shift = index * 2
        let boxX = (index * 5) % max(1, width - 48)
        let boxY = (index * 3) % max(1, height - 48)
        for plane in 0..<buffer.planeCount {
            let geometry = buffer.geometry(ofPlane: plane)
            buffer.withUnsafeMutableBytes(ofPlane: plane) { bytes, stride in
                for y in 0..<geometry.height {
                    for x in 0..<geometry.width {
                        let value: Int
                        switch (format, plane) {
                        case (_, 0):
                            let inBox = x >= boxX && x < boxX + 48 && y >= boxY && y < boxY + 48
                            value = inBox ? 220 - (x - boxX) : 40 + ((x + y + shift) * 160 / (width + height))
                        case (.nv12, _):
                            value = x % 2 == 0 ? 90 + (y * 60 / geometry.height) : 160 - (x * 40 / (2 * geometry.width))
                        case (_, 1): value = 90 + (y * 60 / geometry.height)
                        default: value = 160 - (x * 40 / geometry.width)
                        }
                        if format.bytesPerSample == 2 {
                            let sample = UInt16(value * 4)
                            bytes[y * stride + 2 * x] = UInt8(sample & 0xFF)
                            bytes[y * stride + 2 * x + 1] = UInt8(sample >> 8)
                        } else {
                            bytes[y * stride + x] = UInt8(value)
                        }
                    }
                }
            }
        }
        return buffer
    }

    /// The presentation time of frame `index` at 30 frames per second.
    static func pts(_ index: Int) -> MediaTime { MediaTime(value: Int64(index), timescale: 30) }

    /// Encodes `count` synthetic frames and drains the session.
    static func encodeClip(
        _ session: CompressionSession, count: Int, format: PixelFormat = .i420, forceKeyFrames: Set<Int> = []
    ) throws -> [CompressedSample] {
        var samples: [CompressedSample] = []
        for index in 0..<count {
            let options = FrameOptions(forceKeyFrame: forceKeyFrames.contains(index))
            samples += try session.encode(
                frame(index, width: session.width, height: session.height, format: format), pts: pts(index),
                options: options)
        }
        samples += try session.finish()
        return samples
    }

    /// Annex-B bytes: parameter sets before every keyframe, 4-byte start codes.
    static func annexB(_ samples: [CompressedSample]) throws -> [UInt8] {
        var out: [UInt8] = []
        for sample in samples {
            if sample.isKeyframe {
                for set in sample.formatDescription.parameterSets { out += [0, 0, 0, 1] + set }
            }
            for unit in try LengthPrefixed.nalUnits(in: sample.data, lengthSize: 4) { out += [0, 0, 0, 1] + unit }
        }
        return out
    }

    /// Runs a tool and returns its standard output; throws on a non-zero exit.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String], input: Data? = nil) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let output = Pipe()
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let errorHandle = try FileHandle(forWritingTo: errorFile)
        defer { try? errorHandle.close() }
        process.standardOutput = output
        process.standardError = errorHandle
        var inputFile: URL? = nil
        if let input {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("stdin-\(UUID().uuidString)")
            try input.write(to: url)
            inputFile = url
            process.standardInput = try FileHandle(forReadingFrom: url)
        }
        defer { if let inputFile { try? FileManager.default.removeItem(at: inputFile) } }
        try process.run()
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errData = (try? Data(contentsOf: errorFile)) ?? Data()
        guard process.terminationStatus == 0 else {
            throw MediaError(
                .system,
                "\(tool) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): "
                    + String(decoding: errData.suffix(2000), as: UTF8.self))
        }
        return outData
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("encode-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Decodes an Annex-B stream with ffmpeg (libavcodec) into packed frames
    /// of `pixelFormat` (`yuv420p` or `yuv420p10le`).
    static func decode(_ stream: [UInt8], codec: CodecType, pixelFormat: String = "yuv420p") throws -> Data {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent(codec == .h264 ? "in.h264" : "in.hevc")
        try Data(stream).write(to: input)
        return try run(
            "ffmpeg",
            [
                "-v", "error", "-f", codec == .h264 ? "h264" : "hevc", "-i", input.path, "-f", "rawvideo",
                "-pix_fmt", pixelFormat, "-",
            ])
    }

    /// ffprobe's `pict_type` and `key_frame` for each frame, in presentation order.
    static func probeFrames(_ stream: [UInt8], codec: CodecType) throws -> [(type: String, key: Bool)] {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent(codec == .h264 ? "in.h264" : "in.hevc")
        try Data(stream).write(to: input)
        let text = String(
            decoding: try run(
                "ffprobe",
                [
                    "-v", "error", "-f", codec == .h264 ? "h264" : "hevc", "-show_frames", "-show_entries",
                    "frame=pict_type,key_frame", "-of", "csv=p=0", input.path,
                ]), as: UTF8.self)
        return text.split(separator: "\n").map { line in
            let fields = line.split(separator: ",")
            return (String(fields.count > 1 ? fields[1] : ""), fields.first == "1")
        }
    }

    /// PSNR in dB of one 8-bit plane region (`count` bytes) between two buffers.
    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        precondition(a.count == b.count)
        var sum = 0.0
        for index in a.indices {
            let d = Double(Int(a[index]) - Int(b[index]))
            sum += d * d
        }
        if sum == 0 { return 100 }
        let mse = sum / Double(a.count)
        return 10 * log10(255 * 255 / mse)
    }

    /// The average luma and chroma PSNR of decoded 4:2:0 8-bit frames
    /// against the synthetic originals; returns the worst frame's figure.
    static func worstPSNR(decoded: Data, width: Int, height: Int, count: Int) -> Double {
        let frameSize = width * height * 3 / 2
        var worst = Double.infinity
        for index in 0..<count {
            let start = index * frameSize
            let decodedFrame = [UInt8](decoded[decoded.startIndex + start..<decoded.startIndex + start + frameSize])
            let original = frame(index, width: width, height: height).packedBytes()
            let y = psnr(Array(original[0..<width * height]), Array(decodedFrame[0..<width * height]))
            let c = psnr(Array(original[(width * height)...]), Array(decodedFrame[(width * height)...]))
            worst = min(worst, (4 * y + 2 * c) / 6)
        }
        return worst
    }
}
