#if canImport(Glibc)
    import Glibc
#endif

/// `codecs decode`: not available in this build yet.
func runDecode(_ arguments: [String]) -> Int32 {
    printError("codecs decode: not available in this build yet")
    return 2
}
