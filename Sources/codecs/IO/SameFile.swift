#if canImport(Glibc)
    import Glibc
#endif

/// Refuses an output that is the input itself — the same path, a symlink to
/// it, or another spelling of it — which opening for writing would truncate
/// before a byte is read (FFmpeg refuses the same way).
func refuseOutputOverInput(input: String, output: String) throws(Arguments.UsageError) {
    guard input != "-", output != "-" else { return }
    var inputStatus = stat()
    var outputStatus = stat()
    guard stat(input, &inputStatus) == 0, stat(output, &outputStatus) == 0 else { return }
    if inputStatus.st_dev == outputStatus.st_dev && inputStatus.st_ino == outputStatus.st_ino {
        throw Arguments.UsageError(
            description: "\(output) is the input file \(input); refusing to overwrite the input (choose another output)"
        )
    }
}
