#if canImport(Glibc)
    import Glibc
#endif

/// `codecs encode`: not available in this build yet.
func runEncode(_ arguments: [String]) -> Int32 {
    printError("codecs encode: not available in this build yet")
    return 2
}
