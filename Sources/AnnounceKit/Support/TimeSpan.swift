/// Durations as users write them: `500ms`, `1.5s`, `10s`, `5m`, `1h`, or plain seconds.
public struct TimeSpan: Equatable, Sendable, CustomStringConvertible {
    public var seconds: Double

    public init(seconds: Double) { self.seconds = seconds }

    public init?(parsing text: String) {
        let units: [(suffix: String, scale: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        var number = Substring(text)
        var scale = 1.0
        for unit in units where text.hasSuffix(unit.suffix) {
            number = text.dropLast(unit.suffix.count)
            scale = unit.scale
            break
        }
        guard let value = Double(number), value.isFinite, value >= 0, value * scale <= Self.longest.seconds else { return nil }
        seconds = value * scale
    }

    /// Longer is surely a typo (and would overflow frame counts): about 31 years.
    public static let longest = TimeSpan(seconds: 1e9)

    /// The frame index this span reaches at `sampleRate`, rounded to the nearest frame
    /// (saturating, so no value can trap).
    public func frames(atRate sampleRate: Int) -> Int64 {
        let frames = (seconds * Double(sampleRate)).rounded()
        return frames.isNaN || frames <= 0 ? 0 : frames >= 9.2e18 ? Int64.max : Int64(frames)
    }

    public var description: String { TimeSpan.format(seconds) }

    /// `m:ss.s` for displays.
    public static func format(_ seconds: Double) -> String {
        let tenths = Int((max(0, seconds) * 10).rounded(.down))
        let minutes = tenths / 600
        let rest = tenths % 600
        let secondsPart = rest / 10
        return "\(minutes):\(secondsPart < 10 ? "0" : "")\(secondsPart).\(rest % 10)"
    }
}
