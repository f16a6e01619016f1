import FormatConv
import Foundation
import MediaCore

/// The file extension and ffmpeg format name of a raw Annex-B elementary
/// stream of `codec`: `h264` or `hevc`.
public func annexBFileExtension(_ codec: CodecType) -> String {
    codec == .h264 ? "h264" : "hevc"
}

/// `samples` written back to back through `writer` (FormatConv's
/// ``AnnexBWriter``), with the byte offset at which each sample's access unit
/// begins.
public func annexBStream(_ samples: some Sequence<CompressedSample>, writer: inout AnnexBWriter) throws -> (
    bytes: [UInt8], offsets: [Int]
) {
    var bytes: [UInt8] = []
    var offsets: [Int] = []
    for sample in samples {
        offsets.append(bytes.count)
        bytes += try writer.write(sample)
    }
    return (bytes, offsets)
}

/// `samples` as one Annex-B elementary stream, written by a new
/// ``AnnexBWriter`` (parameter sets before every keyframe unless `policy`
/// says otherwise; access unit delimiters when asked).
public func annexBStream(
    _ samples: some Sequence<CompressedSample>, policy: ParameterSetPolicy = .beforeEveryKeyframe,
    insertAccessUnitDelimiters: Bool = false
) throws -> [UInt8] {
    var writer = AnnexBWriter(policy: policy, insertAccessUnitDelimiters: insertAccessUnitDelimiters)
    return try annexBStream(samples, writer: &writer).bytes
}

/// Writes an Annex-B `stream` of `codec` to `name` plus the codec's extension
/// (``annexBFileExtension(_:)``) in `directory`, replacing any file there.
///
/// - Returns: the file's path.
@discardableResult
public func writeAnnexBFile(
    _ stream: [UInt8], codec: CodecType, in directory: TemporaryDirectory, name: String = "stream"
) throws -> String {
    let path = directory.path("\(name).\(annexBFileExtension(codec))")
    try Data(stream).write(to: URL(fileURLWithPath: path))
    return path
}

/// Feeds `chunks` in order to a new ``AccessUnitAssembler`` and returns
/// everything it produced, `finish()` included.
public func assemble(
    _ chunks: some Sequence<ArraySlice<UInt8>>, codec: CodecType, frameDuration: MediaTime? = nil,
    lengthSize: Int = 4
) -> [AssemblerOutput] {
    var assembler = AccessUnitAssembler(codec: codec, frameDuration: frameDuration, nalUnitHeaderLength: lengthSize)
    var outputs: [AssemblerOutput] = []
    for chunk in chunks { outputs += assembler.append(chunk) }
    return outputs + assembler.finish()
}

/// `stream` given to a new ``AccessUnitAssembler`` in one piece.
public func assemble(_ stream: [UInt8], codec: CodecType, frameDuration: MediaTime? = nil) -> [AssemblerOutput] {
    assemble([stream[...]], codec: codec, frameDuration: frameDuration)
}

/// The samples among an assembler's outputs, in order.
public func samples(_ outputs: [AssemblerOutput]) -> [CompressedSample] {
    outputs.compactMap { if case .sample(let s) = $0 { s } else { nil } }
}

/// The drops an assembler reported, in order: the reason and how many NAL
/// units each dropped.
public func drops(_ outputs: [AssemblerOutput]) -> [(reason: String, count: Int)] {
    outputs.compactMap { if case .dropped(let r, let c) = $0 { (r, c) } else { nil } }
}

/// ffmpeg's per-frame MD5s (``ffmpegFrameMD5(path:extraInputArgs:everyFrame:pixelFormat:outputArgs:)``)
/// of an Annex-B `stream` held in memory, written to a new file in `directory`.
public func ffmpegFrameMD5(annexB stream: [UInt8], codec: CodecType, in directory: TemporaryDirectory) throws
    -> [String]
{
    let path = try writeAnnexBFile(stream, codec: codec, in: directory, name: "decoded-\(UUID().uuidString)")
    return try ffmpegFrameMD5(path: path)
}
