// The tracks other than the video in a conversion or a recording: which are
// copied, the packets left out and why.
import MediaCore

/// The tracks of a file or stream other than its video, copied into a
/// ``ConversionDestination`` packet for packet. A track the destination
/// cannot hold, a damaged packet (left out, counted) and a track whose
/// writing failed (reported once, its later packets left out) are each told
/// as a ``Note``; nothing is dropped without one.
public struct TrackCopier {
    /// A track or packets left out, with the reason.
    public enum Note: Sendable, CustomStringConvertible {
        /// The destination cannot hold the track (`reason`); it is not copied.
        case trackNotCopied(track: MediaTrack, input: String, output: String, reason: String)
        /// Writing the track failed; the rest of it is left out.
        case trackFailed(track: MediaTrack, input: String, error: MediaError)
        /// `count` packets the demuxer found damaged were left out.
        case damagedPacketsLeftOut(track: MediaTrack, input: String, count: Int)
        /// `count` packets after ``trackFailed(track:input:error:)`` were left out.
        case packetsLeftOutAfterError(track: MediaTrack, input: String, count: Int)

        /// The message: the input, the track and what was left out.
        public var description: String {
            switch self {
            case .trackNotCopied(let track, let input, let output, let reason):
                return "\(input) \(track) is not copied to \(output): \(reason)"
            case .trackFailed(let track, let input, let error):
                return "\(input) \(track): \(error.message); the rest of it is left out"
            case .damagedPacketsLeftOut(let track, let input, let count):
                return "\(input) \(track): left out \(count) packet\(count == 1 ? "" : "s") the demuxer found damaged"
            case .packetsLeftOutAfterError(let track, let input, let count):
                return "\(input) \(track): left out \(count) more packet\(count == 1 ? "" : "s") after the error"
            }
        }
    }

    private var outputTrack: [Int: Int] = [:]
    private var tracks: [Int: MediaTrack] = [:]
    private var damaged: [Int: Int] = [:]
    /// Tracks whose writing failed, and the packets left out since.
    private var failed: [Int: Int] = [:]
    private let input: String
    /// The packets copied so far.
    public private(set) var copiedPackets = 0

    /// Decides for each of `sourceTracks` other than `videoTrack`: adds the
    /// ones `destination` can hold and tells `notes` of the others.
    public init(
        _ sourceTracks: [MediaTrack], videoTrack: Int, into destination: some ConversionDestination, input: String,
        output: String, notes: (Note) -> Void
    ) throws(MediaError) {
        self.input = input
        for track in sourceTracks where track.index != videoTrack {
            if let reason = destination.copyRefusal(for: track) {
                notes(.trackNotCopied(track: track, input: input, output: output, reason: reason))
                continue
            }
            outputTrack[track.index] = try destination.addTrack(copying: track)
            tracks[track.index] = track
        }
    }

    /// The number of tracks copied.
    public var count: Int { outputTrack.count }

    /// Writes `packet` when its track is copied. A damaged packet is left out
    /// (counted); an error writing a track is told once, and that track's
    /// later packets are left out (counted).
    public mutating func write(
        _ packet: TrackPacket, to destination: some ConversionDestination, notes: (Note) -> Void
    ) {
        guard let target = outputTrack[packet.track] else { return }
        if failed[packet.track] != nil {
            failed[packet.track, default: 0] += 1
            return
        }
        if packet.isCorrupt {
            damaged[packet.track, default: 0] += 1
            return
        }
        do throws(MediaError) {
            try destination.appendPacket(packet, toTrack: target)
            copiedPackets += 1
        } catch {
            notes(.trackFailed(track: tracks[packet.track]!, input: input, error: error))
            failed[packet.track] = 0
        }
    }

    /// Tells `notes` of the packets left out, per track.
    public func reportLeftOut(_ notes: (Note) -> Void) {
        for (track, count) in damaged.sorted(by: { $0.key < $1.key }) {
            notes(.damagedPacketsLeftOut(track: tracks[track]!, input: input, count: count))
        }
        for (track, count) in failed.sorted(by: { $0.key < $1.key }) where count > 0 {
            notes(.packetsLeftOutAfterError(track: tracks[track]!, input: input, count: count))
        }
    }
}
