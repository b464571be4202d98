import Foundation
import Testing

/// What the speech tests compare: renders by the engines themselves and captures, both read by
/// sox (never by announce's own reader), and how alike two stretches of them are.
enum SpeechAudio {
    /// sox's reading of `path` as mono float samples in -1…1, resampled by sox to `rate` when given.
    static func samples(_ path: String, rate: Int? = nil) async throws -> [Double] {
        let raw = try Harness.capturePath("sox") + ".f32"
        let sox = try await Runner.run(
            "sox",
            ["-V1", path, "-t", "raw", "-e", "floating-point", "-b", "32", "-c", "1"]
                + (rate.map { ["-r", "\($0)"] } ?? []) + [raw])
        guard sox.status == 0 else { throw HarnessError("sox \(path): \(sox)") }
        return try PCM.reference(raw, channels: 1).samples
    }

    /// espeak-ng's own render of `text` (UTF-8 on its stdin, as announce gives it), as a WAV file.
    static func espeakRender(_ text: String) async throws -> String {
        let path = try Harness.capturePath("espeak") + ".wav"
        let espeak = try await Runner.run(
            "sh", ["-c", "printf '%s' \"$1\" | espeak-ng --stdout -b 1 > \"$2\"", "sh", text, path])
        guard espeak.status == 0 else { throw HarnessError("espeak-ng: \(espeak)") }
        return path
    }

    /// Pearson's correlation of two equally long stretches (1: the same sound at any gain).
    static func correlation(_ a: some Collection<Double>, _ b: some Collection<Double>) -> Double {
        let meanA = a.reduce(0, +) / Double(a.count)
        let meanB = b.reduce(0, +) / Double(b.count)
        var ab = 0.0
        var aa = 0.0
        var bb = 0.0
        for (x, y) in zip(a, b) {
            ab += (x - meanA) * (y - meanB)
            aa += (x - meanA) * (x - meanA)
            bb += (y - meanB) * (y - meanB)
        }
        return aa > 0 && bb > 0 ? ab / (aa * bb).squareRoot() : 0
    }
}
