// Cancellation shared by the receivers: a thread-safe switch, and the bridge
// that runs a receiver's blocking read off the caller's task.

import Dispatch
import MediaCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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

/// A value handed to the worker thread of one receiver or sender: the receiver is used
/// by one iterator at a time, which waits for each call to finish, so no two
/// threads touch it at once.
struct HandOver<Value>: @unchecked Sendable {
    let value: Value
}

/// A thread of its own that runs blocking jobs (a receiver's reads, a
/// sender's paced waits) one at a time, so that they hold neither a thread
/// of Swift's cooperative pool nor one of Dispatch's (which other blocking
/// work can use up). Started on first use; ``close()`` ends the thread once
/// the jobs given before it ran.
final class BlockingWorker: Sendable {
    private let jobs = Mutex<(waiting: [@Sendable () -> Void], started: Bool, closed: Bool)>(([], false, false))
    private let ready = DispatchSemaphore(value: 0)

    init() {}

    /// Runs `job` on the worker's thread after those given before it (at
    /// once on the caller's thread when the thread could not be started).
    func run(_ job: @escaping @Sendable () -> Void) {
        let (accepted, start) = jobs.withLock { jobs -> (Bool, Bool) in
            guard !jobs.closed else { return (false, false) }
            jobs.waiting.append(job)
            defer { jobs.started = true }
            return (true, !jobs.started)
        }
        if start && !startThread() {
            // No thread: the jobs given so far run here, and later ones too.
            let waiting = jobs.withLock { jobs in
                jobs.closed = true
                defer { jobs.waiting = [] }
                return jobs.waiting
            }
            for job in waiting { job() }
            return
        }
        if accepted { ready.signal() } else { job() }
    }

    private func startThread() -> Bool {
        var thread = pthread_t()
        let worker = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(
            &thread, nil,
            { argument in
                let worker = Unmanaged<BlockingWorker>.fromOpaque(argument!).takeRetainedValue()
                worker.work()
                return nil
            }, worker)
        guard status == 0 else {
            Unmanaged<BlockingWorker>.fromOpaque(worker).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// Ends the thread after the jobs given so far.
    func close() {
        jobs.withLock { $0.closed = true }
        ready.signal()
    }

    private func work() {
        while true {
            ready.wait()
            let next = jobs.withLock { jobs -> (@Sendable () -> Void)?? in
                if !jobs.waiting.isEmpty { return jobs.waiting.removeFirst() }
                return jobs.closed ? .some(nil) : nil
            }
            switch next {
            case .some(.some(let job)): job()
            case .some(.none): return
            case .none: continue
            }
        }
    }
}

/// Runs `body` (a blocking read or wait) on `worker` and suspends the
/// calling task until it returns, without holding a thread of the task's
/// executor. Cancelling the task flips `cancellation`, which the read
/// checks at least every 50 ms (libavformat's interrupt callback, the RTP
/// and TCP poll slices).
func awaitBlocking<Value: Sendable>(
    on worker: BlockingWorker, cancellation: StreamCancellation,
    _ body: @escaping @Sendable () throws(MediaError) -> Value
) async throws(MediaError) -> Value {
    let result: Result<Value, MediaError> = await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, MediaError>, Never>) in
            worker.run {
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
