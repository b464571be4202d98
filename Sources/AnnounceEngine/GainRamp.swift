import AnnounceModel
import AnnounceOutput
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Linear gain from decibels. Duck levels are given in dB (`duck-level = -12dB`).
public enum Gain {
    /// 10^(dB/20); -∞ dB is silence.
    public static func decibels(_ dB: Float) -> Float {
        dB == -.infinity ? 0 : pow(10, dB / 20)
    }
}

/// A gain that moves smoothly to a target over a number of frames, one gain
/// per frame (every channel of a frame gets the same gain).
///
/// Shape: a raised cosine in linear amplitude,
///     g(k) = start + (target − start) · (1 − cos(π·k/N)) / 2,   k = 1…N,
/// frame k of the ramp gets g(k), so the N-th frame is exactly `target`.
/// Why this shape and not a straight line or a line in dB:
/// - its slope is zero at both ends, so the envelope has no corner where the
///   ramp starts or stops (a linear fade's corners are what is heard as a tick);
/// - the per-frame step is bounded in closed form:
///     |g(k) − g(k−1)| = |Δ| · sin(π(2k−1)/2N) · sin(π/2N) ≤ |Δ| · sin(π/2N) ≤ |Δ|·π/2N,
///   only π/2 times a linear ramp's |Δ|/N. A line in dB is larger still at the
///   loud end (|Δ dB|·ln10/20/N ≈ 1.17× for a -12 dB duck) and keeps its corners.
///
/// Retargeting mid-ramp starts a new ramp from the gain the last frame got,
/// so the gain never jumps. Real-time safe: no allocation, no locks; two trig
/// calls per `apply` while ramping, a rotation per frame in between.
public struct GainRamp: Sendable, Equatable {
    /// The gain the last processed frame got (the start gain before any frame).
    public private(set) var current: Float
    /// Where the ramp ends.
    public private(set) var target: Float
    /// Gain at the start of the ramp in progress.
    private var start: Float
    /// Length of the ramp in progress, in frames.
    private var length = 0
    /// Frames of it already applied.
    private var position = 0

    /// Ramp lengths of a duck (DESIGN §3): about 150 ms down, 400 ms up.
    public static let duckDownSeconds = 0.150
    public static let duckUpSeconds = 0.400

    public init(gain: Float = 1) {
        current = gain
        target = gain
        start = gain
    }

    /// True once the gain sits at its target and stays there.
    public var isSettled: Bool { position >= length }

    /// Moves to `gain` over `overFrames` frames from the current gain; at once when
    /// `overFrames` ≤ 0. A ramp already under way is replaced without a jump.
    public mutating func setTarget(_ gain: Float, overFrames: Int) {
        target = gain
        start = current
        position = 0
        length = overFrames > 0 && gain != current ? overFrames : 0
        if length == 0 {
            current = gain
            start = gain
        }
    }

    /// Multiplies `frames` interleaved frames of `channels` samples in place,
    /// advancing the ramp by `frames`.
    public mutating func apply(to buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        if isSettled && current == 1 { return }
        forEachFrame(frames) { frame, gain in
            let base = buffer + frame * channels
            for channel in 0..<channels { base[channel] *= gain }
        }
    }

    /// Calls `body(frame, gain)` for frames 0..<frames in order, advancing the
    /// ramp. Non-escaping and inlined: no allocation.
    @inline(__always)
    mutating func forEachFrame(_ frames: Int, _ body: (_ frame: Int, _ gain: Float) -> Void) {
        var frame = 0
        if !isSettled, frames > 0 {
            let ramping = min(frames, length - position)
            let span = Double(target) - Double(start)
            let base = Double(start)
            let delta = Double.pi / Double(length)
            // cos/sin of the current angle, then rotated by `delta` per frame; resynced
            // exactly at every call, so the drift over one block is ~1e-13.
            let angle = Double(position) * delta
            var c = cos(angle)
            var s = sin(angle)
            let cd = cos(delta)
            let sd = sin(delta)
            let ends = position + ramping == length
            let computed = ends ? ramping - 1 : ramping
            var gain = current
            while frame < computed {
                (c, s) = (c * cd - s * sd, s * cd + c * sd)
                gain = Float(base + span * (1 - c) * 0.5)
                body(frame, gain)
                frame += 1
            }
            if ends {
                gain = target
                body(frame, gain)
                frame += 1
                start = target
                length = 0
                position = 0
            } else {
                position += ramping
            }
            current = gain
        }
        let gain = current
        while frame < frames {
            body(frame, gain)
            frame += 1
        }
    }
}

extension GainRamp {
    /// The ramp's curve at `progress` (0…1) as the fraction of the way done: the raised cosine
    /// that `forEachFrame` follows frame by frame, for gains set elsewhere (other applications'
    /// streams, DESIGN §3).
    public static func shape(_ progress: Double) -> Double {
        (1 - cos(Double.pi * min(1, max(0, progress)))) / 2
    }
}
