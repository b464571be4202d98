import AnnounceModel

extension SourceFormat {
    /// The same stream as float samples: what a source that works on the samples puts out, so
    /// the device then opens in float if it can.
    var asFloat32: SourceFormat {
        var format = self
        format.exactSampleFormat = .float32
        return format
    }
}
