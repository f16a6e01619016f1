// A stream received into a StreamRecorder: the loop that hands a receiver's
// events (MediaIO's MediaStreamReceiver, or a WHIP endpoint's samples) to the
// recorder until it is satisfied, the stream ends or a stop is asked for.
import MediaCore
import MediaIO
import WebRTC

/// One reception: a `MediaStreamReceiver` or a `WHIPEndpoint`, read into a `StreamRecorder` by ``record(into:)``.
///
/// ```swift
/// let receiver = try MediaStreamReceiver(url: "tcp://127.0.0.1:9000", codec: .h264)
/// let reception = StreamReception(url: "tcp://127.0.0.1:9000", receiver: receiver)
/// var recorder = try StreamRecorder(path: "out.y4m", settings: .init(frameLimit: 30))
/// let end = reception.record(into: &recorder)
/// try recorder.finish()  // what arrived before an error is kept
/// if let error = end.failure { print("stopped: \(error.message)") }
/// ```
///
/// The loop stops when the recorder is satisfied (its frame limit), when the source ends (the sender's end, the
/// last publisher gone) or when ``stopRequested`` says so (the source's wait ends within its step: the
/// receiver's, or the endpoint's 20 ms); then what the source still holds (a jitter buffer's or an assembler's
/// last access units, the endpoint's last samples) is recorded too, unless reception failed at a WHIP endpoint.
/// An error ends reception, not the recording: the recorder keeps what came before it.
public final class StreamReception {
    /// How reception ended: nil errors when the source ended, a stop came or the recorder was satisfied.
    public struct End: Sendable {
        /// The error that ended reception (a timeout, a transport error), if any.
        public var receiveError: MediaError?
        /// The error of the draining after it, if any.
        public var drainError: MediaError?
        /// The first of the two.
        public var failure: MediaError? { receiveError ?? drainError }
    }

    /// The URL received, for messages.
    public let url: String
    /// MediaIO's receiver, when that is the source.
    public let receiver: MediaStreamReceiver?
    /// The WHIP endpoint, when that is the source.
    public let endpoint: WHIPEndpoint?
    /// Asked while waiting: true stops reception.
    public let stopRequested: @Sendable () -> Bool
    private let firstPublisherTimeout: Double

    /// Reception from `receiver` (its `stopRequested` set to `stopRequested`).
    public init(url: String, receiver: MediaStreamReceiver, stopRequested: @escaping @Sendable () -> Bool = { false }) {
        self.url = url
        self.receiver = receiver
        endpoint = nil
        self.stopRequested = stopRequested
        firstPublisherTimeout = 0
        receiver.stopRequested = stopRequested
    }

    /// Reception of the first publisher's samples at `endpoint`; a timeout error when no publisher made an offer
    /// within `firstPublisherWithin` seconds.
    public init(
        url: String, endpoint: WHIPEndpoint, firstPublisherWithin timeout: Double,
        stopRequested: @escaping @Sendable () -> Bool = { false }
    ) {
        self.url = url
        receiver = nil
        self.endpoint = endpoint
        self.stopRequested = stopRequested
        firstPublisherTimeout = timeout
    }

    /// The next event; nil at the end (the sender's end, a stop).
    public func next() throws(MediaError) -> MediaStreamReceiver.Event? {
        if let receiver { return try receiver.next() }
        let sample = try endpoint!.nextSample(
            firstPublisherWithin: .seconds(firstPublisherTimeout), stopRequested: stopRequested)
        return sample.map { .sample($0) }
    }

    /// Ends reception: what the source still holds (none from an endpoint after a failure).
    public func drain(failed: Bool) throws(MediaError) -> [MediaStreamReceiver.Event] {
        if let endpoint {
            endpoint.close()
            return failed ? [] : endpoint.takeReceivedSamples().map { .sample($0) }
        }
        var events: [MediaStreamReceiver.Event] = []
        try receiver!.finish()
        while let event = try receiver!.next() { events.append(event) }
        return events
    }

    /// Records events into `recorder` until it is satisfied, the source ends, a stop comes or an error; then
    /// drains the source into it while it is not satisfied. The recorder is not finished here.
    public func record(into recorder: inout StreamRecorder) -> End {
        var end = End()
        do throws(MediaError) {
            while !recorder.isSatisfied, let event = try next() { try recorder.record(event, from: receiver) }
        } catch {
            end.receiveError = error
        }
        do throws(MediaError) {
            for event in try drain(failed: end.receiveError != nil) where !recorder.isSatisfied {
                try recorder.record(event, from: receiver)
            }
        } catch {
            end.drainError = error
        }
        return end
    }
}
