// A task executor with one thread of its own, for tests that measure how fast
// an awaited receiver ends: the cooperative pool has one thread per core, and
// the suites that run beside a test can hold all of them for seconds.

import Foundation

/// Runs the jobs of the tasks that prefer it on one thread of its own.
public final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    /// Starts the executor's thread.
    public init() {
        Thread { [self] in
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }.start()
    }

    /// Queues `job` for the executor's thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }
}
