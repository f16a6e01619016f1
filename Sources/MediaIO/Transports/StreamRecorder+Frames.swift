import DecodeSession
import FormatConv
import MediaCore

// The Y4M file a StreamRecorder writes decoded frames to.

/// The Y4M file of a ``StreamRecorder``: one picture size (frames
/// after a resolution change come scaled to the first size), the stream's
/// planar layout (I420 for 8-bit 4:2:0, whichever decoder made it), the
/// frame rate of the settings, else the stream's VUI timing, else 30.
struct RecordedFrameFile: DecodedFrameSink {
    let output: String
    let frameLimit: Int?
    let frameRate: (numerator: Int, denominator: Int)?
    let notes: (String) -> Void
    private var writer: FrameFileWriter? = nil
    private var format: FormatDescription? = nil
    private(set) var accessUnits = 0
    private(set) var framesWritten = 0
    private(set) var droppedNALUnits = 0

    init(
        output: String, frameLimit: Int?, frameRate: (numerator: Int, denominator: Int)?,
        notes: @escaping (String) -> Void
    ) {
        self.output = output
        self.notes = notes
        self.frameLimit = frameLimit
        self.frameRate = frameRate
    }

    var isSatisfied: Bool { frameLimit.map { framesWritten >= $0 } ?? false }

    mutating func assemblerDropped(_ nalUnitCount: Int, reason: String) {
        droppedNALUnits += nalUnitCount
        notes("dropped \(nalUnitCount) NAL units: \(reason)")
    }

    mutating func willDecode(_ sample: inout CompressedSample) throws(MediaError) -> Bool {
        accessUnits += 1
        return true
    }

    mutating func formatChanged(to description: FormatDescription, scaledTo: PictureSize?) {
        format = description
        if let scaledTo {
            notes(
                "the stream changed to \(description.width)x\(description.height); "
                    + "scaling to \(scaledTo.width)x\(scaledTo.height)")
        }
    }

    mutating func receive(_ frames: [DecodedFrame]) throws(MediaError) {
        for frame in frames where !isSatisfied {
            let buffer = frame.pixelBuffer
            if writer == nil {
                writer = try FrameFileWriter(
                    path: output, packedPlanes: false, size: PictureSize(width: buffer.width, height: buffer.height),
                    format: buffer.format, frameRate: frameRate ?? FrameFileWriter.frameRate(of: format))
            }
            try writer!.write(buffer)
            framesWritten += 1
        }
    }

    func close() throws(MediaError) {
        try writer?.close()
    }
}
