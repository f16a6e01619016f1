extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws `MediaError`, keeping the
    /// error type (the standard library's version rethrows `any Error`).
    @inline(__always)
    func withBytes<Result>(
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
