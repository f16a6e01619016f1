#if canImport(Glibc)
    import Glibc
#endif

/// `codecs probe`: not available in this build yet.
func runProbe(_ arguments: [String]) -> Int32 {
    printError("codecs probe: not available in this build yet")
    return 2
}
