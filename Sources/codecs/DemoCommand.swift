#if canImport(Glibc)
    import Glibc
#endif

/// `codecs demo`: not available in this build yet.
func runDemo(_ arguments: [String]) -> Int32 {
    printError("codecs demo: not available in this build yet")
    return 2
}
