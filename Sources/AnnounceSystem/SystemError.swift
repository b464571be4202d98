import AnnounceModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// strerror for an errno value, as a Swift string.
package func systemErrorMessage(_ code: Int32) -> String {
    String(cString: strerror(code))
}
