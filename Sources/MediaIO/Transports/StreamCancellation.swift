// Cancellation shared by the receivers: a thread-safe switch, and the bridge
// that runs a receiver's blocking read off the caller's task.

import Dispatch
import MediaCore
import Synchronization

/// A stop switch that any thread or task may flip: ``cancel()`` is an
/// atomic store, ``isCancelled`` an atomic load. A receiver hands one out
/// (``MediaStreamReceiver/cancellation``, ``RTPStreamReceiver/cancellation``)
/// so that code which does not own the receiver can end it.
///
/// ```swift
/// let receiver = try MediaStreamReceiver(url: "srt://127.0.0.1:9000?mode=listener")
/// let stop = receiver.cancellation
/// Task { try await Task.sleep(for: .seconds(30)); stop.cancel() }
/// for try await event in receiver { print(event) }
/// ```
public final class StreamCancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    /// A switch not flipped yet.
    public init() {}

    /// Asks the receiver to stop; later calls do nothing more.
    public func cancel() { flag.store(true, ordering: .releasing) }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { flag.load(ordering: .acquiring) }
}

/// A value handed to the worker queue of one receiver: the receiver is used
/// by one iterator at a time, which waits for each call to finish, so no two
/// threads touch it at once.
struct HandOver<Value>: @unchecked Sendable {
    let value: Value
}

/// Runs `body` (a blocking read) on `queue` and suspends the calling task
/// until it returns, without holding a thread of the task's executor.
/// Cancelling the task flips `cancellation`, which the read checks at least
/// every 50 ms (libavformat's interrupt callback, the RTP and TCP poll
/// slices).
func awaitBlocking<Value: Sendable>(
    on queue: DispatchQueue, cancellation: StreamCancellation,
    _ body: @escaping @Sendable () throws(MediaError) -> Value
) async throws(MediaError) -> Value {
    let result: Result<Value, MediaError> = await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, MediaError>, Never>) in
            queue.async {
                continuation.resume(returning: Result { () throws(MediaError) -> Value in try body() })
            }
        }
    } onCancel: {
        cancellation.cancel()
    }
    return try result.get()
}

/// A receiver's or sender's stop condition as libavformat's interrupt
/// callback asks it: its ``StreamCancellation``, or the caller's
/// `stopRequested` closure as it is now (set or replaced at any time, also
/// after the connection opened).
final class StopCondition: Sendable {
    let cancellation: StreamCancellation
    private let request = Mutex<(@Sendable () -> Bool)?>(nil)

    init(_ cancellation: StreamCancellation = StreamCancellation()) {
        self.cancellation = cancellation
    }

    /// The caller's stop request closure.
    var stopRequested: (@Sendable () -> Bool)? {
        get { request.withLock { $0 } }
        set { request.withLock { $0 = newValue } }
    }

    /// Whether a cancel or the stop request closure asks to stop.
    var isAsked: Bool {
        if cancellation.isCancelled { return true }
        return stopRequested?() == true
    }
}
