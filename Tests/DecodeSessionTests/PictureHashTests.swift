import DecodeSession
import FormatConv
import Foundation
import MediaCore
import NativeCodecs
import TestSupport
import Testing

/// HEVC's decoded picture hash SEI (H.265 D.3.19), written by x265
/// (`--hash 1` MD5, `2` CRC, `3` checksum), checked picture by picture by
/// ``DecompressionSession/verifiesPictureHashes``: a check independent of
/// libavcodec, computed by the encoder from its own reconstruction.
///
/// Every stream is 300 × 170, which x265 codes as 304 × 176 with a
/// conformance window: the hash covers the whole decoded picture, not the
/// cropped one the session hands out.
@Suite struct PictureHashTests {
    static let frames = 24

    struct Case: Sendable, CustomStringConvertible {
        var hash: Int
        var pixelFormat: String
        var arguments: [String]
        var method: PictureHashCheck.Method { [.md5, .crc, .checksum][hash - 1] }
        var components: Int { pixelFormat == "gray" ? 1 : 3 }
        var description: String { "--hash \(hash), \(pixelFormat)" }

        /// B-frames (3), an open GOP (a CRA with RASL pictures at frame 12)
        /// and 32 × 32 CTUs (6 rows).
        func stream(in directory: TemporaryDirectory, extra: [String] = []) throws -> String {
            let source = try TestStreams.y4m(
                "source", in: directory, width: 300, height: 170, frames: PictureHashTests.frames,
                pixelFormat: pixelFormat)
            return try TestStreams.encodeWithCLI(
                .hevc, source: source,
                arguments: [
                    "--preset", "ultrafast", "--ctu", "32", "--bframes", "3", "--keyint", "12", "--open-gop",
                    "--hash", "\(hash)",
                ] + arguments + extra, in: directory, name: "hashed")
        }
    }

    static let layouts: [(String, [String])] = [
        ("yuv420p", []),
        ("yuv420p10le", ["--output-depth", "10"]),
        ("yuv422p10le", ["--output-depth", "10", "--profile", "main422-10"]),
        ("gray", ["--input-csp", "i400"]),
    ]

    static let cases: [Case] = (1...3).flatMap { hash in
        layouts.map { Case(hash: hash, pixelFormat: $0.0, arguments: $0.1) }
    }

    static func verifyingSession(_ samples: [CompressedSample]) throws -> DecompressionSession {
        let session = try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software)
        session.verifiesPictureHashes = true
        return session
    }

    /// MD5 and checksum: every picture matches. CRC: x265 3.5 computes the
    /// chroma CRCs wrongly — it restarts their register at every row of
    /// CTUs, so they cover the last row only — so every picture's luma CRC
    /// matches and its chroma CRCs do not (``x265sChromaCRCCoversItsLastCTURow()``
    /// shows what x265 hashed).
    @Test(arguments: cases)
    func everyPictureIsCheckedAgainstX265sHash(_ hashed: Case) throws {
        let directory = try TemporaryDirectory()
        let samples = try TestStreams.samples(ofFile: try hashed.stream(in: directory), codec: .hevc)
        #expect(samples.count == Self.frames)
        let session = try Self.verifyingSession(samples)
        let frames = try decodeAll(session, samples)
        #expect(frames.count == Self.frames)
        #expect(session.statistics == DecodeStatistics(submitted: Self.frames, decoded: Self.frames))
        let x265sChromaCRC = hashed.method == .crc && hashed.components == 3
        for frame in frames {
            let check = try #require(frame.pictureHash, "pts \(frame.pts)")
            #expect(check.method == hashed.method)
            #expect(check.expected.count == hashed.components)
            #expect(check.mismatchedComponents == (x265sChromaCRC ? [1, 2] : []), "pts \(frame.pts): \(check)")
        }
        let expected =
            x265sChromaCRC
            ? PictureHashStatistics(matched: 0, mismatched: Self.frames)
            : PictureHashStatistics(matched: Self.frames)
        #expect(session.pictureHashStatistics == expected)
        #expect(session.pictureHashMismatches.count == expected.mismatched)
    }

    /// The hash covers the whole decoded picture (304 × 176), not the
    /// picture after its conformance window (300 × 170): the MD5 of the
    /// cropped luma the session hands out is not the stream's.
    @Test func theHashCoversTheWholeDecodedPicture() throws {
        let directory = try TemporaryDirectory()
        let samples = try TestStreams.samples(
            ofFile: try Self.cases[0].stream(in: directory), codec: .hevc)
        let session = try Self.verifyingSession(samples)
        let frames = try decodeAll(session, samples)
        #expect(session.pictureHashStatistics.matched == Self.frames)
        for frame in frames {
            let buffer = frame.pixelBuffer
            #expect(buffer.width == 300 && buffer.height == 170)
            var md5 = MD5()
            buffer.withUnsafeBytes(ofPlane: 0) { bytes, stride in
                for row in 0..<170 {
                    md5.update(UnsafeRawBufferPointer(rebasing: bytes[row * stride..<row * stride + 300]))
                }
            }
            let croppedMD5 = md5.finalize().map { String(format: "%02x", $0) }.joined()
            #expect(frame.pictureHash?.expected.first != croppedMD5)
            #expect(frame.pictureHash?.computed.first == frame.pictureHash?.expected.first)
        }
    }

    /// What x265 3.5 puts in `picture_crc` for Cb and Cr: the CRC (by D.3.19's
    /// method) of the last row of CTUs only (chroma rows 80 to 87 of 88 with
    /// 32 × 32 CTUs: luma rows 160 to 175). Our CRC of those rows equals the
    /// stream's on every picture, so the mismatch of the whole-picture CRC
    /// is x265's, not the verifier's.
    @Test func x265sChromaCRCCoversItsLastCTURow() throws {
        let directory = try TemporaryDirectory()
        let samples = try TestStreams.samples(ofFile: try Self.cases[4].stream(in: directory), codec: .hevc)
        let description = samples[0].formatDescription
        let decoder = try LibavcodecDecoder(codec: .hevc, record: description.record, threadCount: 1, hardware: nil)
        var checked = 0
        func check(_ picture: DecodedPicture) throws {
            let token = Int(picture.token)
            let stream = try #require(
                HEVCDecodedPictureHash.find(inSample: samples[token].data, lengthSize: description.nalUnitHeaderLength))
            #expect(stream.method == .crc)
            let arrays = try #require(picture.decodedSampleArrays)
            #expect(arrays.map(\.height) == [176, 88, 88])
            let whole = HEVCDecodedPictureHash.compute(.crc, over: arrays)
            #expect(whole.components[0] == stream.components[0])
            let lastRows = arrays.dropFirst().map { array in
                var rows = array
                rows.base += 80 * array.stride
                rows.height = 8
                return rows
            }
            let x265s = HEVCDecodedPictureHash.compute(.crc, over: lastRows)
            #expect(x265s.components == Array(stream.components.dropFirst()), "picture \(token)")
            checked += 1
        }
        for (index, sample) in samples.enumerated() {
            _ = try decoder.sendPacket(sample.data, token: Int64(index), isKeyframe: sample.isKeyframe)
            while case (.done, let picture?) = try decoder.receiveFrame() { try check(picture) }
        }
        try decoder.sendEndOfStreamPacket()
        while case (.done, let picture?) = try decoder.receiveFrame() { try check(picture) }
        #expect(checked == Self.frames)
    }

    /// A stream whose B-pictures no other picture refers to (`--no-b-pyramid`),
    /// with three bytes in the middle of one B-picture's slice data
    /// changed: libavcodec decodes it without noticing, the session
    /// delivers it, and its MD5 does not match — that picture only.
    @Test func aCorruptedSliceIsAHashMismatchAtThatPicture() throws {
        let directory = try TemporaryDirectory()
        var samples = try TestStreams.samples(
            ofFile: try Self.cases[0].stream(in: directory, extra: ["--no-b-pyramid"]), codec: .hevc)
        // The third B-picture (TRAIL_N) in decode order.
        let bPictures = samples.indices.filter { index in
            let ranges = try? LengthPrefixed.nalUnitRanges(in: samples[index].data, lengthSize: 4, codec: .hevc)
            guard let first = ranges?.first else { return false }
            return HEVCNALUnitHeader(samples[index].data[first.lowerBound], 0).type == .trailN
        }
        let target = bPictures[2]
        let slice = try #require(
            try LengthPrefixed.nalUnitRanges(in: samples[target].data, lengthSize: 4, codec: .hevc).first)
        let middle = (slice.lowerBound + slice.upperBound) / 2
        for offset in 0..<3 { samples[target].data[middle + offset] ^= 0x5A }
        let original = samples[target]
        let session = try Self.verifyingSession(samples)
        let frames = try decodeAll(session, samples)
        #expect(frames.count == Self.frames)
        #expect(session.drops.isEmpty)
        #expect(session.pictureHashStatistics == PictureHashStatistics(matched: Self.frames - 1, mismatched: 1))
        #expect(session.pictureHashMismatches == [original.pts])
        let damaged = try #require(frames.first { $0.pts == original.pts }?.pictureHash)
        #expect(!damaged.matches && damaged.method == .md5)
    }

    /// Off by default: no frame carries a check and nothing is counted.
    @Test func verificationIsOffByDefault() throws {
        let directory = try TemporaryDirectory()
        let samples = try TestStreams.samples(ofFile: try Self.cases[0].stream(in: directory), codec: .hevc)
        let session = try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software)
        let frames = try decodeAll(session, samples)
        #expect(frames.count == Self.frames && frames.allSatisfy { $0.pictureHash == nil })
        #expect(session.pictureHashStatistics == PictureHashStatistics())
    }
}

extension PictureHashTests {
    /// The asynchronous session checks pictures too: every frame it hands
    /// out carries a matched MD5 check.
    @Test func theAsynchronousSessionChecksEveryPicture() async throws {
        let directory = try TemporaryDirectory()
        let samples = try TestStreams.samples(ofFile: try Self.cases[0].stream(in: directory), codec: .hevc)
        let session = try AsyncDecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software, verifiesPictureHashes: true)
        let consumer = Task {
            var checks: [PictureHashCheck?] = []
            for try await frame in session.frames { checks.append(frame.pictureHash) }
            return checks
        }
        for sample in samples { try await session.decode(sample) }
        try await session.finish()
        let checks = try await consumer.value
        #expect(checks.count == Self.frames)
        #expect(checks.allSatisfy { $0?.matches == true && $0?.method == .md5 })
    }
}
