// CodecLog.withHandler: a handler for the messages of one thread or task.
import Foundation
import Synchronization
import Testing

@testable import MediaCore

@Suite struct CodecLogScopeTests {
    /// Messages logged inside the scope go to its handler (the innermost one
    /// when scopes nest), those logged after it to the handler of the
    /// enclosing scope; another thread's message does not reach the scope.
    @Test func scopedHandlersTakeTheirThreadsMessages() throws {
        let outer = Mutex<[String]>([])
        let inner = Mutex<[String]>([])
        CodecLog.withHandler({ message in outer.withLock { $0.append(message.message) } }) {
            CodecLog.log(.info, subsystem: "test.scope", "outer 1")
            CodecLog.withHandler({ message in inner.withLock { $0.append(message.message) } }) {
                CodecLog.log(.warning, subsystem: "test.scope", "inner")
            }
            let done = DispatchSemaphore(value: 0)
            Thread {
                CodecLog.log(.info, subsystem: "test.scope", "another thread")
                done.signal()
            }.start()
            done.wait()
            CodecLog.log(.info, subsystem: "test.scope", "outer 2")
        }
        #expect(outer.withLock { $0 } == ["outer 1", "outer 2"])
        #expect(inner.withLock { $0 } == ["inner"])
    }

    /// A task started inside the scope logs to its handler too; the body's
    /// result and error come out of `withHandler`.
    @Test func childTasksInheritTheScopeAndResultsPassThrough() async throws {
        let received = Mutex<[LogMessage]>([])
        let handler: CodecLog.Handler = { message in received.withLock { $0.append(message) } }
        let task = CodecLog.withHandler(handler) {
            Task { CodecLog.log(.error, subsystem: "test.scope", "from a task") }
        }
        await task.value
        #expect(
            received.withLock { $0 } == [LogMessage(level: .error, subsystem: "test.scope", message: "from a task")])
        #expect(CodecLog.withHandler(handler) { 42 } == 42)
        #expect(throws: MediaError.self) {
            try CodecLog.withHandler(handler) { () throws(MediaError) -> Int in throw .invalidArgument("no") }
        }
    }
}
