#if canImport(Glibc)
    import Glibc
#endif

/// `codecs inspect`: not available in this build yet.
func runInspect(_ arguments: [String]) -> Int32 {
    printError("codecs inspect: not available in this build yet")
    return 2
}
