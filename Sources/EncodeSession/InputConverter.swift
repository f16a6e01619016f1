import MediaCore
import PixelTransfer

/// Converts the frames a ``CompressionSession`` takes but its encoders do
/// not (`.bgra`) into the encoders' own layout, with a `PixelTransferSession`.
///
/// Frames already in an encoder layout (I420, NV12, I010) pass through
/// untouched. BGRA goes to I420 (I010 for Main10 sessions) with libswscale's
/// BT.601 limited-range coefficients, the matrix the encoders' default VUI
/// leaves the decoder to assume. The converted frame comes from the transfer
/// session's pool and returns to it when the encoder is done with it: every
/// backend copies or uploads a frame inside its `encode` call, so one buffer
/// is in use at a time and steady-state conversion allocates nothing.
final class InputConverter {
    /// What BGRA frames are converted to.
    let encoderFormat: PixelFormat
    private var transfer: PixelTransferSession?

    init(encoderFormat: PixelFormat) {
        self.encoderFormat = encoderFormat
    }

    /// `frame` in a layout the encoders take.
    func encoderInput(_ frame: PixelBuffer) throws(MediaError) -> PixelBuffer {
        guard frame.format == .bgra else { return frame }
        let transfer = self.transfer ?? PixelTransferSession(poolCapacity: 4)
        self.transfer = transfer
        return try transfer.transfer(frame, to: encoderFormat)
    }
}
