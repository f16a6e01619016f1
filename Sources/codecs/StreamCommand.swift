#if canImport(Glibc)
    import Glibc
#endif

/// `codecs stream`: not available in this build yet.
func runStream(_ arguments: [String]) -> Int32 {
    printError("codecs stream: not available in this build yet")
    return 2
}
