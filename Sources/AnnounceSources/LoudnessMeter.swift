import AnnounceModel
import CEBUR128

#if canImport(Glibc)
    import Glibc
#endif

/// EBU R128 measurement through libebur128 (a library made for it; CEBUR128 loads it on first use): integrated loudness,
/// true peak, loudness range and the loudest momentary loudness of interleaved float frames.
/// Channels map as libebur128 and ffmpeg's `ebur128` both map WAV order: left, right, centre,
/// LFE (not counted), left and right surround (weighted 1.41); a mono clip counts as one
/// channel, not as dual mono.
public final class LoudnessMeter {
    private let state: UnsafeMutablePointer<ebur128_state>
    private let channels: Int
    private var momentaryMax = -Double.infinity
    /// Frames since the last momentary reading: read every 100 ms, as the 400 ms windows slide.
    private var sinceReading = 0
    private let readingEvery: Int

    /// `full`: true peak and loudness range too (`announce info`); else integrated and
    /// momentary loudness only, what a gain is set by (the limiter holds the peaks), at a
    /// third of the cost.
    public init(channels: Int, sampleRate: Int, full: Bool = true) throws(AnnounceError) {
        if let problem = announce_ebur128_load() { throw .unavailable(String(cString: problem)) }
        // Block energies in a histogram (0.01 LU steps) rather than a list: no allocation per block.
        let extra =
            (full ? EBUR128_MODE_LRA.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue : 0) | EBUR128_MODE_HISTOGRAM.rawValue
        let mode = Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_S.rawValue | extra)
        guard channels > 0, sampleRate > 0, let state = announce_ebur128_init(UInt32(channels), UInt(sampleRate), mode)
        else {
            throw .internal("libebur128 cannot measure \(channels) channel(s) at \(sampleRate) Hz")
        }
        self.state = state
        self.channels = channels
        readingEvery = max(1, sampleRate / 10)
    }

    deinit {
        var state: UnsafeMutablePointer<ebur128_state>? = state
        announce_ebur128_destroy(&state)
    }

    /// Takes `count` interleaved frames.
    public func add(_ frames: UnsafePointer<Float>, count: Int) throws(AnnounceError) {
        var offset = 0
        while offset < count {
            // In steps of at most 100 ms, so the momentary loudness is read as it slides.
            let step = min(count - offset, readingEvery - sinceReading)
            guard announce_ebur128_add_frames_float(state, frames + offset * channels, step) == 0 else {
                throw .internal("libebur128 could not take frames")
            }
            offset += step
            sinceReading += step
            if sinceReading == readingEvery {
                sinceReading = 0
                var momentary = 0.0
                if announce_ebur128_loudness_momentary(state, &momentary) == 0, momentary.isFinite {
                    momentaryMax = max(momentaryMax, momentary)
                }
            }
        }
    }

    /// What several meters measure as one: parts of one clip measured side by side (integrated
    /// loudness over every part's blocks, the loudest momentary of any).
    public static func combined(_ meters: [LoudnessMeter]) -> Loudness {
        var states: [UnsafeMutablePointer<ebur128_state>?] = meters.map(\.state)
        var integrated = 0.0
        let global = states.withUnsafeMutableBufferPointer {
            announce_ebur128_loudness_global_multiple($0.baseAddress, $0.count, &integrated)
        }
        return Loudness(
            integrated: global == 0 ? Loudness.finite(integrated) : nil,
            momentaryMax: meters.compactMap { $0.measurement.momentaryMax }.max())
    }

    /// The short-term loudness (the last 3 s), LUFS; nil under the gate or before any frame.
    public var shortTerm: Double? {
        var value = 0.0
        return announce_ebur128_loudness_shortterm(state, &value) == 0 ? Loudness.finite(value) : nil
    }

    /// What the frames taken so far measure. A clip shorter than a gating block is measured by
    /// the momentary window holding all of it (as ffmpeg's `ebur128` reads it padded to 400 ms).
    public var measurement: Loudness {
        var integrated = 0.0
        var range = 0.0
        var peak = 0.0
        var momentaryMax = momentaryMax
        var momentary = 0.0
        if sinceReading > 0, announce_ebur128_loudness_momentary(state, &momentary) == 0, momentary.isFinite {
            momentaryMax = max(momentaryMax, momentary)
        }
        for channel in 0..<channels {
            var channelPeak = 0.0
            if announce_ebur128_true_peak(state, UInt32(channel), &channelPeak) == 0 { peak = max(peak, channelPeak) }
        }
        return Loudness(
            integrated: announce_ebur128_loudness_global(state, &integrated) == 0 ? Loudness.finite(integrated) : nil,
            truePeak: peak > 0 ? 20 * log10(peak) : nil,
            range: announce_ebur128_loudness_range(state, &range) == 0 ? Loudness.finite(range) : nil,
            momentaryMax: Loudness.finite(momentaryMax))
    }

    /// `decoder` read from where it is to its end, measured.
    public static func measure(_ decoder: any AudioDecoder) throws(AnnounceError) -> Loudness {
        let meter = try LoudnessMeter(channels: decoder.info.channels, sampleRate: decoder.info.sampleRate)
        let frames = 4096
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: frames * decoder.info.channels)
        defer { buffer.deallocate() }
        while case let got = try decoder.read(into: buffer), got > 0 {
            try meter.add(buffer.baseAddress!, count: got)
        }
        return meter.measurement
    }
}
