#if canImport(Glibc)
    import Glibc
#endif

/// `codecs convert`: not available in this build yet.
func runConvert(_ arguments: [String]) -> Int32 {
    printError("codecs convert: not available in this build yet")
    return 2
}
