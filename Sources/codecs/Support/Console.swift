#if canImport(Glibc)
    import Glibc
#endif

/// Writes `text` and a newline to standard error.
func printError(_ text: String) {
    writeError(text + "\n")
}

/// Writes `text` to standard error as it is.
func writeError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(2, bytes.baseAddress! + offset, bytes.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}

/// Whether standard error is a terminal (progress lines are shown only then).
var standardErrorIsTerminal: Bool { isatty(2) != 0 }

/// Flushes standard output; false when anything written to it was lost (a
/// full disk, `> /dev/full`, a closed pipe), with `errno` set.
func flushStandardOutput() -> Bool {
    // fflush(NULL) flushes every output stream and reports any failure.
    fflush(nil) == 0
}
