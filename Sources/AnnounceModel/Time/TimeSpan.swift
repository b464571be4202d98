/// Durations as users write them: `500ms`, `1.5s`, `10s`, `5m`, `1h`, plain seconds, units
/// combined largest first (`1m30s`, `1h2m3.5s`), or a clock reading (`0:24.9`, `1:02:03`).
public struct TimeSpan: Equatable, Sendable, CustomStringConvertible {
    public var seconds: Double

    public init(seconds: Double) { self.seconds = seconds }

    public init?(parsing text: String) {
        guard let span = try? TimeSpan(validating: text) else { return nil }
        self = span
    }

    /// Parses `text`, or says why it is not a duration (for `announce: --delay X: <reason>`).
    public init(validating text: String) throws(TimeTextError) {
        if text.hasPrefix("-") { throw TimeTextError("a duration cannot be negative") }
        let seconds = text.contains(":") ? try Self.clockSeconds(text) : try Self.unitSeconds(text)
        guard seconds.isFinite, seconds <= Self.longest.seconds else {
            throw TimeTextError("longer than \(Int(Self.longest.seconds)) s")
        }
        self.seconds = seconds
    }

    package static let example = "like 90, 1.5s, 500ms, 1m30s or 1:30"

    /// `1h2m3.5s`, `500ms`, `90`: number-unit pairs, each unit once and largest first.
    private static func unitSeconds(_ text: String) throws(TimeTextError) -> Double {
        let units: [(name: String, scale: Double)] = [("h", 3600), ("m", 60), ("s", 1), ("ms", 0.001)]
        var rest = Substring(text)
        var total = 0.0
        var nextUnit = 0  // units must come largest first, each once
        guard !rest.isEmpty else { throw TimeTextError("empty; give a duration \(example)") }
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            rest = rest.dropFirst(number.count)
            let unitText = rest.prefix { $0.isASCII && $0.isLetter }
            rest = rest.dropFirst(unitText.count)
            guard let value = decimal(number) else {
                throw TimeTextError("not a duration; give one \(example)")
            }
            if unitText.isEmpty {
                // A bare number is seconds, and only on its own.
                guard total == 0, nextUnit == 0, rest.isEmpty else {
                    throw TimeTextError("a number without a unit; give one \(example)")
                }
                return value
            }
            guard let index = units.firstIndex(where: { $0.name == unitText }) else {
                throw TimeTextError("unknown unit '\(unitText)'; use h, m, s or ms, \(example)")
            }
            guard index >= nextUnit else { throw TimeTextError("units go largest first, each once, \(example)") }
            total += value * units[index].scale
            nextUnit = index + 1
        }
        return total
    }

    /// `M:SS[.f]` or `H:MM:SS[.f]`: minutes and seconds below 60 after the first field.
    private static func clockSeconds(_ text: String) throws(TimeTextError) -> Double {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count <= 3 else { throw TimeTextError("at most hours:minutes:seconds") }
        var total = 0.0
        for (index, field) in fields.enumerated() {
            let last = index == fields.count - 1
            guard let value = last ? decimal(field) : decimal(field).flatMap({ $0 == $0.rounded() ? $0 : nil }) else {
                throw TimeTextError("not a duration; give one \(example)")
            }
            if index > 0 && value >= 60 {
                throw TimeTextError("\(last ? "seconds" : "minutes") must be below 60, not \(field)")
            }
            total = total * 60 + value
        }
        return total
    }

    /// A non-negative decimal of ASCII digits and one optional point (no sign, exponent, nan or inf).
    private static func decimal(_ text: Substring) -> Double? {
        guard !text.isEmpty, text != ".", text.utf8.filter({ $0 == UInt8(ascii: ".") }).count <= 1,
            text.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return Double(text)
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

    /// `m:ss.s` for displays, `h:mm:ss.s` from an hour on (as durations are given: `1:02:03`).
    public static func format(_ seconds: Double) -> String {
        let tenths = Int((min(max(0, seconds), 1e15) * 10).rounded(.down))
        let hours = tenths / 36000
        let minutes = tenths / 600 % 60
        let rest = tenths % 600
        let secondsPart = rest / 10
        let minutesText = hours > 0 ? "\(hours):\(minutes < 10 ? "0" : "")\(minutes)" : "\(minutes)"
        return "\(minutesText):\(secondsPart < 10 ? "0" : "")\(secondsPart).\(rest % 10)"
    }
}

/// Why a duration or time of day given on the command line is not one.
public struct TimeTextError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
