// The tool's checks on an output named on the command line, over MediaIO's
// file helpers.
import MediaIO

/// Refuses an output that is the input itself (MediaIO's ``isSameFile(input:output:)``):
/// opening it for writing would truncate it before a byte is read (FFmpeg
/// refuses the same way).
func refuseOutputOverInput(input: String, output: String) throws(Arguments.UsageError) {
    if isSameFile(input: input, output: output) {
        throw Arguments.UsageError(
            description: "\(output) is the input file \(input); refusing to overwrite the input (choose another output)"
        )
    }
}
