// Micro-benchmarks of announce's per-buffer work, through the layers' public API (the product
// AnnounceLayers of the root package). One iteration = one second of audio, one queue item or one
// protocol line, so the figures read as "per second of audio" / "per item" / "per line". The
// mixer and the PCM ring are internal to AnnounceEngine and are measured end to end by
// `make bench` (mixing CPU) instead.
//
// Run by `make bench` (scripts/bench.py) or by hand:
//   cd Benchmarks && swift package --disable-sandbox benchmark
// BENCH_INPUTS=DIR takes mp3-1min.mp3 and wav-1min.wav from DIR (scripts/bench.py passes its
// .bench-cache); otherwise the repo's sounds/ are decoded.
import AnnounceEngine
import AnnounceModel
import AnnounceSources
import Benchmark
import Foundation

private let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

private func input(_ name: String, orElse fallback: String) -> String {
    if let dir = ProcessInfo.processInfo.environment["BENCH_INPUTS"],
        FileManager.default.fileExists(atPath: "\(dir)/\(name)")
    {
        return "\(dir)/\(name)"
    }
    return repoRoot.appendingPathComponent(fallback).path
}

/// One second of a 440 Hz stereo tone at `rate`, interleaved float32.
private func tone(rate: Int, seconds: Double = 1, amplitude: Float = 0.5) -> [Float] {
    let frames = Int(Double(rate) * seconds)
    var samples = [Float](repeating: 0, count: frames * 2)
    for i in 0..<frames {
        let x = amplitude * Float(sin(2 * Double.pi * 440 * Double(i) / Double(rate)))
        samples[2 * i] = x
        samples[2 * i + 1] = x
    }
    return samples
}

/// Decodes the whole file to float32 in 8192-frame chunks (the daemon's decode loop's size).
private func decodeAll(_ path: String) throws -> Int {
    let decoder = try DecoderRegistry.open(path)
    let channels = decoder.info.channels
    let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 8192 * channels)
    defer { buffer.deallocate() }
    var total = 0
    while true {
        let got = try decoder.read(into: buffer)
        if got == 0 { return total }
        total += got
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 2,
        maxDuration: .seconds(Int(ProcessInfo.processInfo.environment["BENCH_MICRO_SECONDS"] ?? "2") ?? 2),
        maxIterations: 1000
    )

    // What the harness itself counts per iteration (its allocations are in every row's).
    Benchmark("baseline: an empty iteration") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(0) }
    }

    // speexdsp through Resampler, as the decode side runs it for a 44.1 kHz clip on a 48 kHz device.
    Benchmark("resampler: 1 s of 44.1 kHz stereo to 48 kHz (4096-frame blocks)") { benchmark in
        let input = tone(rate: 44_100)
        let resampler = try Resampler(channels: 2, inputRate: 44_100, outputRate: 48_000)
        let capacity = resampler.outputCapacity(forInputFrames: 4096)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: capacity * 2)
        defer { output.deallocate() }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            input.withUnsafeBufferPointer { samples in
                var frame = 0
                while frame < 44_100 {
                    let n = min(4096, 44_100 - frame)
                    let (used, made) = resampler.process(
                        samples.baseAddress! + frame * 2, frames: n, into: output, capacity: capacity)
                    blackHole(made)
                    frame += used
                }
            }
        }
    }

    // The limiter the mixer bends every mixed block with (the playback thread's per-sample cost).
    Benchmark("limiter: 1 s of 48 kHz stereo") { benchmark in
        let source = tone(rate: 48_000, amplitude: 1.2)
        var bus = source
        let limiter = SoftLimiter()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            bus.withUnsafeMutableBufferPointer { buffer in
                limiter.process(buffer.baseAddress!, count: buffer.count)
            }
            blackHole(bus)
        }
    }

    // A gain ramp over every frame (a duck down and back up each second), as a ducked stream is mixed.
    Benchmark("gain ramp: 1 s of 48 kHz stereo, ducking") { benchmark in
        var bus = tone(rate: 48_000)
        var ramp = GainRamp(gain: 1)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            bus.withUnsafeMutableBufferPointer { buffer in
                let block = 1024
                var frame = 0
                while frame < 48_000 {
                    if frame == 0 { ramp.setTarget(0.1, overFrames: 7_200) }
                    if frame == 24_576 { ramp.setTarget(1, overFrames: 19_200) }
                    let n = min(block, 48_000 - frame)
                    ramp.apply(to: buffer.baseAddress! + frame * 2, frames: n, channels: 2)
                    frame += n
                }
            }
            blackHole(bus)
        }
    }

    // Decoding a whole file to float32 (open included), as the daemon's decode thread does.
    for (label, name, fallback) in [
        ("MP3 (libmpg123)", "mp3-1min.mp3", "sounds/done.mp3"),
        ("WAV (libsndfile)", "wav-1min.wav", "sounds/attention.wav")
    ] {
        let path = input(name, orElse: fallback)
        Benchmark(
            "decode: \(label), \((path as NSString).lastPathComponent)",
            configuration: .init(
                metrics: [.wallClock, .mallocCountTotal], timeUnits: .microseconds,
                maxIterations: 100)
        ) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try decodeAll(path))
            }
        }
    }

    // The pure queue: 100 normal items enqueued, each played to the end (enqueue, play effect,
    // playbackEnded, finish effect), as the control thread runs it. One iteration = 100 items.
    Benchmark("scheduler: 100 items enqueued, played and finished") { benchmark in
        let clip = Clip(path: "/tmp/x.wav")
        for _ in benchmark.scaledIterations {
            var scheduler = Scheduler()
            var now = 1_000.0
            for i in 0..<100 {
                blackHole(scheduler.enqueue(QueueItem(id: "i\(i)", clip: clip, arrival: now), now: now))
            }
            while let playing = scheduler.playing {
                now += 1
                blackHole(
                    scheduler.playbackEnded(
                        id: playing.id, heardFrames: 48_000, totalFrames: 48_000, end: .finished, now: now))
            }
        }
    }

    // The control thread's protocol work for a `play`: its request line decoded (the bench's
    // preemption request: one clip, priority high), and an event encoded (each play has several).
    // Warm here; on a woken control thread each costs several times as much.
    Benchmark("protocol: a play request line decoded") { benchmark in
        let line = Array(
            #"{"items":[{"clip":{"gain":1,"loops":0,"pan":0,"path":"/tmp/wav-0.05s.wav"},"priority":"high"}],"op":"play","v":1,"wait":false}"#
                .utf8)
        for _ in benchmark.scaledIterations { blackHole(try Request(line: line)) }
    }

    Benchmark("protocol: a started event encoded") { benchmark in
        let item = QueueItem(id: "0c2d83210a71", clip: Clip(path: "/tmp/wav-0.05s.wav"), arrival: 1_000)
        let event = Event(
            time: 1_765_000_000.123,
            .started(EventItem(item), heard: 0, duration: 0.05, device: "null", format: "s16 48000 Hz 2 ch"))
        for _ in benchmark.scaledIterations { blackHole(JSONCoding.encode(event)) }
    }
}
