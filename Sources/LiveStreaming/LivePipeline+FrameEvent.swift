// What the pipeline's frame observer sees: each frame around its encoding,
// each encoder as it is finished.
import EncodeSession
import FormatConv
import MediaCore

extension LivePipeline {
    /// A moment in a frame's or an encoder's life, for ``LivePipeline/frameObserver``.
    public enum FrameEvent {
        /// Frame `index` (0-based, counted over the run) is about to be
        /// encoded by `encoder`, after its wait and the feedback applied.
        case willEncode(PixelBuffer, index: Int, pts: MediaTime, encoder: CompressionSession)
        /// Frame `index` was encoded; `samples` came out (not yet sent).
        case encoded(index: Int, samples: Int)
        /// `encoder` is about to be finished (the end of the run, or a new picture size).
        case willFinish(CompressionSession)
        /// `encoder` was finished; what it held back is sent next.
        case finished(CompressionSession)
    }
}
