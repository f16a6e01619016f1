#if canImport(Glibc)
    import Glibc
#endif

/// Whether `output` names the file `input` is — the same path, a symlink to
/// it, or another spelling of it (same device and inode) — which opening
/// for writing would truncate before a byte is read. False when either is
/// `-` or either does not exist yet.
public func isSameFile(input: String, output: String) -> Bool {
    guard input != "-", output != "-" else { return false }
    var inputStatus = stat()
    var outputStatus = stat()
    guard stat(input, &inputStatus) == 0, stat(output, &outputStatus) == 0 else { return false }
    return inputStatus.st_dev == outputStatus.st_dev && inputStatus.st_ino == outputStatus.st_ino
}
