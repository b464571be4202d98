import Foundation
import Testing

/// The device sample formats announce negotiates (the names its debug line uses).
enum SampleFormat: String, Sendable, CaseIterable {
    case int16, int32, float32

    var bytesPerSample: Int { self == .int16 ? 2 : 4 }

    /// Full scale: samples are compared as value / scale.
    var scale: Double {
        switch self {
        case .int16: 32_768
        case .int32: 2_147_483_648
        case .float32: 1
        }
    }

    /// One least significant bit, in normalised units.
    var lsb: Double { self == .float32 ? 0 : 1 / scale }

    /// The raw reference file extension for this format (`s16`, `s32`, `f32`).
    var referenceExtension: String {
        switch self {
        case .int16: "s16"
        case .int32: "s32"
        case .float32: "f32"
        }
    }

    /// The format of a raw reference file extension (`s16`, `s32`, `f32`).
    init?(referenceExtension: String) {
        switch referenceExtension {
        case "s16": self = .int16
        case "s32": self = .int32
        case "f32": self = .float32
        default: return nil
        }
    }
}

/// Interleaved samples normalised to full scale (int16 / 32768, int32 / 2^31, float as is).
/// Every int16, int32 and float32 converts to Double exactly, so equality is bit equality.
struct PCM: Sendable {
    var format: SampleFormat
    var channels: Int
    var samples: [Double]

    var frames: Int { samples.count / channels }

    init(format: SampleFormat, channels: Int, samples: [Double]) {
        self.format = format
        self.channels = channels
        self.samples = samples
    }

    /// Little-endian interleaved bytes; a trailing partial sample is ignored.
    init(format: SampleFormat, channels: Int, bytes: Data) {
        self.format = format
        self.channels = channels
        let count = bytes.count / format.bytesPerSample
        var samples = [Double](repeating: 0, count: count)
        bytes.withUnsafeBytes { raw in
            switch format {
            case .int16:
                for i in 0..<count {
                    samples[i] =
                        Double(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: 2 * i, as: Int16.self)))
                        / format.scale
                }
            case .int32:
                for i in 0..<count {
                    samples[i] =
                        Double(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * i, as: Int32.self)))
                        / format.scale
                }
            case .float32:
                for i in 0..<count {
                    let bits = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self))
                    samples[i] = Double(Float(bitPattern: bits))
                }
            }
        }
        self.samples = samples
    }

    /// A raw reference decode: the format comes from the extension (`.s16`, `.s32`, `.f32`).
    static func reference(_ path: String, channels: Int) throws -> PCM {
        guard let format = SampleFormat(referenceExtension: URL(fileURLWithPath: path).pathExtension) else {
            throw HarnessError("\(path): unknown reference format")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw HarnessError("\(path): cannot read reference decode")
        }
        return PCM(format: format, channels: channels, bytes: data)
    }

    /// Float samples as the device gets them at an integer format: x × full scale, rounded
    /// half away from zero and clipped to the format's range (int32 keeps 2^31 − 128 as its top,
    /// the largest float below 2^31). Integer PCM is returned as it is.
    func quantised(to target: SampleFormat) -> PCM {
        guard format == .float32, target != .float32 else { return self }
        let top = target == .int32 ? 2_147_483_520.0 : 32_767
        return PCM(
            format: target, channels: channels,
            samples: samples.map {
                min(max(($0 * target.scale).rounded(), -target.scale), top) / target.scale
            })
    }

    /// Frames `range` (clamped) as a new PCM.
    func frames(_ range: Range<Int>) -> PCM {
        let lower = min(max(range.lowerBound, 0), frames)
        let upper = min(max(range.upperBound, lower), frames)
        return PCM(format: format, channels: channels, samples: Array(samples[lower * channels..<upper * channels]))
    }

    func frames(from start: Int) -> PCM { frames(start..<frames) }

    static func + (lhs: PCM, rhs: PCM) -> PCM {
        precondition(lhs.format == rhs.format && lhs.channels == rhs.channels)
        return PCM(format: lhs.format, channels: lhs.channels, samples: lhs.samples + rhs.samples)
    }

    /// Each sample times the gain of its channel.
    func scaled(_ gains: [Double]) -> PCM {
        precondition(gains.count == channels)
        var copy = self
        for i in copy.samples.indices { copy.samples[i] *= gains[i % channels] }
        return copy
    }

    /// Mono made stereo: both channels carry the mono sample.
    func monoToStereo() -> PCM {
        precondition(channels == 1)
        return PCM(format: format, channels: 2, samples: samples.flatMap { [$0, $0] })
    }

    /// One channel's samples.
    func channel(_ index: Int) -> [Double] {
        stride(from: index, to: samples.count, by: channels).map { samples[$0] }
    }
}

/// What ALSA's file device wrote: the fmt chunk's claims and the bytes after the data header.
struct WAVCapture: Sendable {
    var formatTag: UInt16
    var channels: Int
    var sampleRate: Int
    var bitsPerSample: Int
    /// Everything after the `data` chunk header to the end of the file. The header's data
    /// size is not trusted: the file plugin may not finalise it.
    var data: Data

    /// Walks the RIFF chunks of `path`.
    init(path: String) throws {
        guard let file = FileManager.default.contents(atPath: path) else {
            throw HarnessError("cannot read capture \(path)")
        }
        let bytes = [UInt8](file)
        func u32(_ at: Int) -> Int {
            Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func id(_ at: Int) -> String { String(decoding: bytes[at..<at + 4], as: UTF8.self) }
        guard bytes.count >= 12, id(0) == "RIFF", id(8) == "WAVE" else {
            throw HarnessError("capture \(path) is not a RIFF/WAVE file (\(bytes.count) bytes)")
        }
        var fmt: (tag: Int, channels: Int, rate: Int, bits: Int)?
        var offset = 12
        while offset + 8 <= bytes.count {
            let chunk = id(offset)
            let size = u32(offset + 4)
            if chunk == "fmt ", offset + 24 <= bytes.count {
                fmt = (u16(offset + 8), u16(offset + 10), u32(offset + 12), u16(offset + 22))
            }
            if chunk == "data" {
                guard let fmt else { throw HarnessError("capture \(path): data chunk before fmt chunk") }
                formatTag = UInt16(fmt.tag)
                channels = fmt.channels
                sampleRate = fmt.rate
                bitsPerSample = fmt.bits
                data = Data(bytes[(offset + 8)...])
                return
            }
            offset += 8 + size + (size & 1)
        }
        throw HarnessError("capture \(path) has no data chunk")
    }

    /// Bytes of audio in the capture at `path`; 0 when the device was never opened (no file).
    static func audioBytes(atPath path: String) throws -> Int {
        FileManager.default.fileExists(atPath: path) ? try WAVCapture(path: path).data.count : 0
    }
}

/// Normalised tolerances, with the reasons in one place.
enum Tolerance {
    /// Bit-exact.
    static let exact = 0.0
    /// The product rounds `sample × gain` to the nearest integer; the spec allows ±1 LSB.
    static func oneLSB(_ format: SampleFormat) -> Double { format.lsb * 1.000001 }
}

/// Compares `output` with `expected` sample by sample, within `tolerance` (normalised),
/// over the expected length. The output may be longer (ALSA's file device pads the tail to
/// a period) but what follows must be silence, unless `outputMayContinue` (the reference is
/// only a prefix of what plays). Records one issue per kind of failure, naming the first
/// offending frame and the largest difference.
func expectSamples(
    _ output: PCM, match expected: PCM, tolerance: Double, outputMayContinue: Bool = false,
    _ what: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    guard output.format == expected.format else {
        Issue.record(
            "\(what): device format \(output.format.rawValue), expected \(expected.format.rawValue)",
            sourceLocation: sourceLocation)
        return
    }
    guard output.channels == expected.channels else {
        Issue.record(
            "\(what): \(output.channels) channels out, expected \(expected.channels)", sourceLocation: sourceLocation)
        return
    }
    let scale = expected.format.scale
    func show(_ value: Double) -> String {
        expected.format == .float32 ? "\(value)" : "\(Int((value * scale).rounded()))"
    }
    let compared = min(output.samples.count, expected.samples.count)
    var worst = 0.0
    var worstIndex = -1
    var firstBad = -1
    for i in 0..<compared {
        let difference = abs(output.samples[i] - expected.samples[i])
        if difference > worst {
            worst = difference
            worstIndex = i
        }
        if difference > tolerance && firstBad < 0 { firstBad = i }
    }
    if firstBad >= 0 {
        let c = expected.channels
        Issue.record(
            """
            \(what): samples differ beyond \(tolerance)\(expected.format == .float32 ? "" : " (\(show(tolerance)) \(expected.format.rawValue) LSB)") \
            from frame \(firstBad / c) channel \(firstBad % c): got \(show(output.samples[firstBad])), \
            expected \(show(expected.samples[firstBad])); largest difference \(worst) \
            at frame \(worstIndex / c) channel \(worstIndex % c)
            """, sourceLocation: sourceLocation)
    }
    if output.samples.count < expected.samples.count {
        Issue.record(
            "\(what): \(output.frames) frames out, expected at least \(expected.frames)",
            sourceLocation: sourceLocation)
    } else if !outputMayContinue,
        let extra = output.samples[expected.samples.count...].firstIndex(where: { $0 != 0 })
    {
        Issue.record(
            """
            \(what): \(output.frames) frames out for \(expected.frames) expected, and the extra frames \
            are not silence (frame \(extra / expected.channels) is \(show(output.samples[extra])))
            """, sourceLocation: sourceLocation)
    }
}
