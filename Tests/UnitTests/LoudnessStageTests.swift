import Foundation
import Testing

@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceSources

/// The loudness stage: the gain rule, the look-ahead limiter (its true peak measured by
/// libebur128, not by the limiter's own detector), the leveled source and the cache.
@Suite struct LoudnessStageTests {
    static let rate = 48_000

    /// Interleaved stereo: a sine on the left, another on the right.
    static func stereo(seconds: Double, left: Double, right: Double, amplitude: Float) -> [Float] {
        let count = Int(seconds * Double(rate))
        return (0..<count).flatMap { index -> [Float] in
            let time = Double(index) / Double(rate)
            return [amplitude * Float(sin(2 * .pi * left * time)), amplitude * Float(sin(2 * .pi * right * time))]
        }
    }

    static func measure(_ samples: [Float], channels: Int) throws -> Loudness {
        let meter = try LoudnessMeter(channels: channels, sampleRate: rate)
        try samples.withUnsafeBufferPointer { try meter.add($0.baseAddress!, count: $0.count / channels) }
        return meter.measurement
    }

    @Test func theGainBringsTheLevelToTheTargetAndLeavesSilenceAlone() {
        #expect(Loudness(integrated: -30).gain(toward: -16) == 14)
        #expect(Loudness(integrated: -8).gain(toward: -16) == -8)
        #expect(
            Loudness(momentaryMax: -20).gain(toward: -16) == 4, "a clip under 400 ms: its loudest momentary loudness")
        #expect(Loudness(integrated: -75, momentaryMax: -72).gain(toward: -16) == 0, "near-silence is not amplified")
        #expect(Loudness().gain(toward: -16) == 0, "silence is not amplified")
    }

    @Test func aStreamsGainMovesAtMostOneDecibelASecondAndHoldsThroughSilence() {
        var gain = SlowGain(target: -16)
        #expect(gain.follow(shortTerm: -30, over: 0.5) == 0.5)
        #expect(gain.follow(shortTerm: nil, over: 1) == 0.5, "nothing measured yet: held")
        #expect(gain.follow(shortTerm: -80, over: 1) == 0.5, "near-silence: held, never lifted")
        for _ in 0..<20 { _ = gain.follow(shortTerm: -30, over: 1) }
        #expect(gain.decibels == 14, "there, and no further")
        #expect(gain.follow(shortTerm: -10, over: 0.25) == 13.75, "down as slowly")
    }

    @Test func targetsParseAsTheConfigAndTheOptionWriteThem() throws {
        #expect(LoudnessTarget(parsing: "-16") == .lufs(-16))
        #expect(LoudnessTarget(parsing: "-23 LUFS") == .lufs(-23))
        #expect(LoudnessTarget(parsing: "OFF") == .off)
        for bad in ["7", "loud", "-41", "-4.9", "", "nan"] { #expect(LoudnessTarget(parsing: bad) == nil, "\(bad)") }
        let encoded = try JSONEncoder().encode([LoudnessTarget.off, .lufs(-14.5)])
        #expect(String(decoding: encoded, as: UTF8.self) == #"["off",-14.5]"#)
        #expect(try JSONDecoder().decode([LoudnessTarget].self, from: encoded) == [.off, .lufs(-14.5)])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(LoudnessTarget.self, from: Data(#""loud""#.utf8))
        }
        #expect(ItemRequest.loudnessProblem(.lufs(7))?.description == "loudness must be -40 to -5 LUFS or off, not 7.0")
    }

    @Test(arguments: [(997.0, 1499.0, 3.0), (5_000.0, 11_025.0, 9.0), (11_990.0, 3_000.0, 14.0)])
    func theLimiterHoldsTheTruePeakAndKeepsEveryFrame(left: Double, right: Double, gainDB: Double) throws {
        // Near a quarter of the rate, samples miss the crest: the true peak is over the sample peak.
        let input = Self.stereo(seconds: 1, left: left, right: right, amplitude: 0.7)
        let source = MemorySource(floats: input, channels: 2)
        let leveled = LeveledSource(source, gain: gainDB)
        let out = try ReshapedSourceTests.readAll(leveled)
        #expect(out.count == input.count, "as many frames out as in")
        let peak = try #require(try Self.measure(out, channels: 2).truePeak)
        #expect(peak <= LeveledSource.defaultCeiling + 0.1, "true peak \(peak) dBTP")
        #expect(peak >= LeveledSource.defaultCeiling - 1, "limited, not flattened: \(peak) dBTP")
        #expect(leveled.deepestLimiting < 0)
    }

    @Test func underTheCeilingEveryFrameComesOutAsItWentIn() throws {
        let input = Self.stereo(seconds: 0.5, left: 440, right: 660, amplitude: 0.25)
        let out = try ReshapedSourceTests.readAll(LeveledSource(MemorySource(floats: input, channels: 2), gain: 0))
        let expected = input.map { Float(Int16(($0 * 32_768).rounded())) / 32_768 }  // MemorySource keeps 16 bits
        #expect(out == expected, "untouched, and in place")
    }

    @Test func aGainWithoutPeaksIsExact() throws {
        let input = Self.stereo(seconds: 0.5, left: 440, right: 660, amplitude: 0.1)
        let out = try ReshapedSourceTests.readAll(LeveledSource(MemorySource(floats: input, channels: 2), gain: 6))
        let expected = input.map { Float(Int16(($0 * 32_768).rounded())) / 32_768 * Float(pow(10, 6.0 / 20)) }
        #expect(zip(out, expected).allSatisfy { abs($0 - $1) < 1e-6 })
    }

    @Test func aSeekStartsAfreshWhereItWasAsked() throws {
        let input = Self.stereo(seconds: 0.5, left: 440, right: 660, amplitude: 0.1)
        let leveled = LeveledSource(MemorySource(floats: input, channels: 2), gain: 0)
        var buffer = [Float](repeating: 0, count: 1000 * 2)
        _ = try buffer.withUnsafeMutableBytes { try leveled.read(into: $0.baseAddress!, frames: 1000, as: .float32) }
        try leveled.seek(toFrame: 12_000)
        let rest = try ReshapedSourceTests.readAll(leveled)
        #expect(rest.count == input.count - 24_000)
        #expect(rest.first == Float(Int16((input[24_000] * 32_768).rounded())) / 32_768)
    }

    final class Tap: SourceTap {
        var frames = 0
        var ended = 0
        func take(_ frames: UnsafePointer<Float>, count: Int) { self.frames += count }
        func passEnded() { ended += 1 }
    }

    @Test func theTapSeesTheRestOfOneUnbrokenPass() throws {
        let input = Self.stereo(seconds: 1, left: 440, right: 660, amplitude: 0.1)
        let tap = Tap()
        _ = try ReshapedSourceTests.readAll(
            LeveledSource(MemorySource(floats: input, channels: 2), gain: 0, tap: tap, tapFrom: 30_000))
        #expect(tap.frames == 18_000 && tap.ended == 1)
        let broken = Tap()
        let leveled = LeveledSource(MemorySource(floats: input, channels: 2), gain: 0, tap: broken, tapFrom: 100)
        try leveled.seek(toFrame: 5_000)
        _ = try ReshapedSourceTests.readAll(leveled)
        #expect(broken.ended == 0, "a seek mid-way: the measurement is not whole")
    }

    @Test func twoHalvesMeasuredSideBySideMeasureAsTheWhole() throws {
        // A level that changes halfway (6 dB, inside the relative gate), so that each half alone
        // would be far from the whole.
        let quiet = Self.stereo(seconds: 4, left: 440, right: 550, amplitude: 0.15)
        let loud = Self.stereo(seconds: 4, left: 330, right: 660, amplitude: 0.3)
        let whole = try Self.measure(quiet + loud, channels: 2)
        let first = try LoudnessMeter(channels: 2, sampleRate: Self.rate, full: false)
        let second = try LoudnessMeter(channels: 2, sampleRate: Self.rate, full: false)
        try quiet.withUnsafeBufferPointer { try first.add($0.baseAddress!, count: $0.count / 2) }
        try loud.withUnsafeBufferPointer { try second.add($0.baseAddress!, count: $0.count / 2) }
        let joined = LoudnessMeter.combined([first, second])
        let (a, b) = (try #require(whole.integrated), try #require(joined.integrated))
        #expect(abs(a - b) < 0.2, "whole \(a) LUFS, halves joined \(b)")
        #expect(abs((second.measurement.integrated ?? 0) - b) > 1, "each half alone is another figure")
    }

    @Test func theCacheKeepsGainsAcrossRestartsAndRebuildsWhatDoesNotRead() throws {
        let directory = NSTemporaryDirectory() + "loudness-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/announce/loudness"
        let warnings = WarningLog()
        let cache = LoudnessCache(path: path, warn: warnings.add)
        let key = String(repeating: "a", count: 32)
        cache.store(gain: 4.5, for: key)
        #expect(LoudnessCache(path: path, warn: warnings.add).gain(for: key) == 4.5, "read back by a new daemon")
        try
            ("garbage\n" + String(repeating: "b", count: 32) + " nan\n"
            + (try String(contentsOfFile: path, encoding: .utf8)))
            .write(toFile: path, atomically: true, encoding: .utf8)
        let reread = LoudnessCache(path: path, warn: warnings.add)
        #expect(reread.gain(for: key) == 4.5, "good lines are kept")
        #expect(warnings.lines == ["loudness cache \(path): 2 unreadable line(s) dropped; the file is written again"])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == key + " 4.5\n", "rewritten without them")

        let unwritable = LoudnessCache(path: "/proc/announce-cannot-be-here/loudness", warn: warnings.add)
        unwritable.store(gain: 1, for: key)
        unwritable.store(gain: 2, for: key)
        #expect(unwritable.gain(for: key) == 2, "kept in memory")
        #expect(
            warnings.lines.count == 2
                && warnings.lines[1].hasPrefix("loudness cache /proc/announce-cannot-be-here/loudness: "))
    }

    @Test func anEditedFileHasAnotherKey() throws {
        let path = NSTemporaryDirectory() + "loudness-key-\(UUID().uuidString)"
        defer { unlink(path) }
        try "one".write(toFile: path, atomically: false, encoding: .utf8)
        let before = LoudnessCache.key(of: FileName(path), target: -16)
        #expect(before != nil && before == LoudnessCache.key(of: FileName(path), target: -16))
        #expect(before != LoudnessCache.key(of: FileName(path), target: -20), "another target, another gain")
        try "two!".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(LoudnessCache.key(of: FileName(path), target: -16) != before)
        #expect(LoudnessCache.key(of: FileName("/nonexistent/x.wav"), target: -16) == nil)
    }
}

/// Warnings as a daemon would log them.
final class WarningLog: @unchecked Sendable {
    private let lock = NSLock()
    private var kept: [String] = []
    var lines: [String] { lock.withLock { kept } }
    func add(_ line: String) { lock.withLock { kept.append(line) } }
}
