// The round trip's settings: the clip, the encoder, the transport and the faults.
import EncodeSession
import FormatConv
import MediaCore

extension RoundTripTrial {
    /// How the stream travels.
    public enum Transport: String, Sendable {
        /// RTP over UDP through `RTPStreamSender` and `RTPStreamReceiver`
        /// (RTCP: reports, NACK, picture loss indications).
        case rtp
        /// Annex-B over TCP, read in chunks of varying size and reassembled.
        case tcp
    }

    /// Packets an RTP sender loses on purpose, at random from a seed.
    public struct Loss: Sendable {
        /// The share of packets lost, in percent (0…100).
        public var percent: Double
        /// The seed of the choice.
        public var seed: UInt64

        /// `percent` of the packets, chosen by `seed`.
        public init(percent: Double, seed: UInt64 = 1) {
            self.percent = percent
            self.seed = seed
        }
    }

    /// A trial's settings; the defaults are `codecs demo`'s.
    public struct Configuration: Sendable {
        /// Frames in the synthetic clip (default 300).
        public var frames = 300
        /// The picture size (default 1280x720).
        public var width = 1280
        /// The picture height.
        public var height = 720
        /// Frames per second (default 30).
        public var frameRate = 30
        /// The codec (default H.264).
        public var codec: CodecType = .h264
        /// The encoder backend (default: hardware when it works, else software).
        public var encoder: CodecBackend = .automatic
        /// The encoder's properties; by default the live ones: real-time,
        /// no frame reordering, preset veryfast, a keyframe every second.
        public var properties: CompressionProperties
        /// RTP over UDP (default) or Annex-B over TCP.
        public var transport = Transport.rtp
        /// The receiver joins after this many frames (RTP: where the stream
        /// is, its picture loss indication asking for a keyframe; TCP: at the next keyframe).
        public var lateJoin = 0
        /// Every Nth access unit (N ≥ 2) is lost: RTP loses every packet of
        /// its first transmission on the way, TCP leaves it out.
        public var dropEvery: Int?
        /// RTP: packets the sender loses on the way (retransmissions too).
        public var loss: Loss?
        /// RTP: the receiver asks for lost packets again (generic NACK).
        public var nack = true
        /// RTP: the sender answers picture loss indications with a keyframe.
        public var answersKeyframeRequests = true
        /// RTP: how long packets after a gap wait for the missing ones.
        public var jitterMilliseconds = 100
        /// The sender switches to ``secondSize`` at ``changeFrame`` (a new encoder).
        public var resolutionChange = false
        /// Send each frame at its time (default); false: as fast as the encoder runs.
        public var pacing = true
        /// Pass marks: the average luma PSNR over all decoded frames, and the
        /// least any single frame may have.
        public var minimumAveragePSNR = 35.0
        /// The least luma PSNR any decoded frame may have (default 30 dB).
        public var minimumFramePSNR = 30.0
        /// A frame the receiver discards after decoding it, standing for a
        /// loss no sender drop explains (the report then fails); for tests.
        public var losingDecodedFrame: Int?
        /// Asked before each frame, while a TCP sender paces and while the
        /// TCP receiver connects: true ends the run after the frames sent so
        /// far (the report covers those).
        public var stopRequested: @Sendable () -> Bool = { false }

        /// `codecs demo`'s defaults.
        public init() {
            var live = CompressionProperties()
            live.realTime = true
            live.allowFrameReordering = false
            live.preset = "veryfast"
            live.maxKeyFrameInterval = frameRate
            live.expectedFrameRate = Double(frameRate)
            properties = live
        }

        /// The size after ``resolutionChange``: half of each side, kept even.
        public var secondSize: (width: Int, height: Int) {
            (max(16, width / 4 * 2), max(16, height / 4 * 2))
        }

        /// The first frame coded at ``secondSize`` (when ``resolutionChange``).
        public var changeFrame: Int { frames / 2 }
    }
}
