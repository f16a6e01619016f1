// The words for an `errno` value, for the messages of this module.
#if canImport(Glibc)
    import Glibc
#endif

/// The text of `errno` value `code` (the current `errno` by default).
func systemErrorText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}
