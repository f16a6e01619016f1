import DecodeSession
import FormatConv
import MediaCore
import PixelTransfer

/// Decoded pictures to a file: Y4M (``Y4MWriter``), or the planes packed
/// one frame after another without headers (a ``FileByteSink``). `-` is
/// standard output. The file is written under a temporary name
/// (``PendingOutput``) and appears under its own only when ``close()``
/// succeeds.
///
/// A file holds one layout, the one it was opened for: a picture in another
/// (a hardware decoder's NV12 after software I420, say) is converted to it
/// with a `PixelTransferSession` (exact between I420 and NV12, I010 and P010).
public final class FrameFileWriter {
    /// The layout of every frame in the file.
    public let format: PixelFormat
    private var transfer: PixelTransferSession?
    private let y4m: Y4MWriter?
    private let packed: (any ByteSink)?
    /// The file under its temporary name until ``close()``.
    private let output: PendingOutput

    /// Opens `path` for frames of one size and layout. `packedPlanes` asks
    /// for headerless frames; Y4M holds the planar Y'CbCr formats only
    /// (another format is refused with an `unsupported` error).
    public init(
        path: String, packedPlanes: Bool, size: PictureSize, format: PixelFormat,
        frameRate: (numerator: Int, denominator: Int)
    ) throws(MediaError) {
        let output = PendingOutput(path)
        self.output = output
        self.format = format
        if packedPlanes {
            y4m = nil
            do throws(MediaError) {
                packed = try FileByteSink(path: output.writePath)
            } catch {
                throw output.naming(error)
            }
        } else {
            guard Y4MHeader.colorSpaceTag(for: format) != nil else {
                throw .unsupported(
                    "Y4M holds planar Y'CbCr frames (i420, i422, i444, gray, 10- and 12-bit forms), not \(format); "
                        + "choose such a --pixel-format or an output name without .y4m for packed \(format) frames")
            }
            do throws(MediaError) {
                y4m = try Y4MWriter(
                    path: output.writePath,
                    header: Y4MHeader(
                        width: size.width, height: size.height, frameRate: frameRate, pixelFormat: format))
            } catch {
                throw output.naming(error)
            }
            packed = nil
        }
    }

    /// Appends one picture, converted to ``format`` first when its layout differs.
    public func write(_ picture: PixelBuffer) throws(MediaError) {
        var buffer = picture
        if buffer.format != format {
            let transfer = self.transfer ?? PixelTransferSession(poolCapacity: 2)
            self.transfer = transfer
            buffer = try transfer.transfer(picture, to: format)
        }
        do throws(MediaError) {
            if let y4m { try y4m.write(buffer) } else { try packed!.write(buffer.packedBytes()) }
        } catch {
            throw output.naming(error)
        }
    }

    /// Closes the file and moves it to its final name; without this call
    /// the file is removed.
    public func close() throws(MediaError) {
        do throws(MediaError) {
            try y4m?.close()
            try packed?.close()
        } catch {
            throw output.naming(error)
        }
        try output.commit()
    }

    /// The frame rate a Y4M header gets for a stream of `description`: its
    /// VUI timing when that gives 1 to 240 frames a second, else `fallback`.
    /// VUI timing of a variable-rate stream can be a clock tick rather than
    /// a frame (H.264 E.2.1 fixed_frame_rate_flag 0), hence the check.
    public static func frameRate(
        of description: FormatDescription?, fallback: (numerator: Int, denominator: Int) = (30, 1)
    ) -> (numerator: Int, denominator: Int) {
        guard let duration = description?.vuiFrameRate, duration.isValid, duration.value > 0,
            (1...240).contains(duration.timescale / Int32(clamping: duration.value))
        else { return fallback }
        return (Int(duration.timescale), Int(duration.value))
    }
}
