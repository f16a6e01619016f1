extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws `MediaError`, keeping the
    /// error type (the standard library's version rethrows `any Error`).
    ///
    /// Inlinable so that RTPPayload's per-packet callers inline it across
    /// the module boundary too: an out-of-line call cost the packetizer
    /// 30 % per sample (callgrind, `make bench-gate`).
    @inlinable @inline(__always)
    package func withBytes<Result>(
        _ body: (UnsafeRawBufferPointer) throws(MediaError) -> Result
    ) throws(MediaError) -> Result {
        let outcome: Swift.Result<Result, MediaError> = withUnsafeBytes { buffer in
            do throws(MediaError) {
                return .success(try body(buffer))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }
}

/// Copies `input[range]` to `output` at `offset` (a `memcpy`); the caller
/// has checked both bounds.
@inline(__always)
func copyBytes(
    from input: UnsafeRawBufferPointer, _ range: Range<Int>, to output: UnsafeMutableBufferPointer<UInt8>,
    at offset: Int
) {
    guard !range.isEmpty else { return }
    UnsafeMutableRawPointer(output.baseAddress! + offset)
        .copyMemory(from: input.baseAddress! + range.lowerBound, byteCount: range.count)
}

extension Array where Element == UInt8 {
    /// Replaces the contents with `count` bytes written by `body`, reusing the
    /// array's storage when it is large enough.
    ///
    /// Costs: no allocation when the capacity already holds `count` bytes (the
    /// steady state of a converter fed access units of similar size); one
    /// allocation of exactly `count` bytes, without zero-filling, otherwise.
    /// Growing within the capacity zero-fills only the added bytes. `body`
    /// must initialize all `count` bytes.
    @inline(__always)
    mutating func overwrite<E: Error>(
        count: Int, _ body: (UnsafeMutableBufferPointer<UInt8>) throws(E) -> Void
    ) throws(E) {
        if capacity < count {
            var failure: E?
            self = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                do throws(E) {
                    try body(UnsafeMutableBufferPointer(rebasing: buffer[0..<count]))
                    initialized = count
                } catch {
                    failure = error
                    initialized = 0
                }
            }
            if let failure { throw failure }
            return
        }
        if self.count > count {
            removeLast(self.count - count)
        } else if self.count < count {
            append(contentsOf: repeatElement(0, count: count - self.count))
        }
        var failure: E?
        withUnsafeMutableBufferPointer { buffer in
            do throws(E) {
                try body(buffer)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }
}
