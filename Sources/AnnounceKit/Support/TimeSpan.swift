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
        guard let value = Double(number), value.isFinite, value >= 0 else { return nil }
        seconds = value * scale
    }

    /// The frame index this span reaches at `sampleRate`, rounded to the nearest frame.
    public func frames(atRate sampleRate: Int) -> Int64 {
        Int64((seconds * Double(sampleRate)).rounded())
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
