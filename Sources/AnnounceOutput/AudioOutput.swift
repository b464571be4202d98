import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Sample layout a device was opened with.
public struct OutputFormat: Equatable, Sendable, CustomStringConvertible {
    public var sampleFormat: SampleFormat
    public var sampleRate: Int
    public var channels: Int

    public init(sampleFormat: SampleFormat, sampleRate: Int, channels: Int) {
        self.sampleFormat = sampleFormat
        self.sampleRate = sampleRate
        self.channels = channels
    }

    public var bytesPerFrame: Int { sampleFormat.bytesPerSample * channels }
    public var description: String { "\(sampleFormat) \(sampleRate) Hz \(channels) ch" }
}

/// What a caller asks a device for.
public struct OutputRequest: Equatable, Sendable {
    public var sampleRate: Int
    public var channels: Int
    /// Tried in order; the first the device takes wins.
    public var sampleFormats: [SampleFormat]
    /// For a kernel driver (hw, plughw, dmix): interrupts every period, so short ones.
    public var periodMicroseconds: Int = 20_000
    public var periods: Int = 4
    /// For a sound server's plugin (PulseAudio, PipeWire, JACK, BlueALSA: an ioplug PCM). The
    /// server paces and mixes with its own buffer, and every period wakes the plugin's thread
    /// and ours: 60 ms periods cost a third of the CPU of 20 ms ones (PulseAudio's plugin takes
    /// no fewer than 3). The price: a stream that joins the mix (an alert, a duck) is heard
    /// 120–180 ms later instead of 60–80 ms.
    public var serverPeriodMicroseconds: Int = 60_000
    public var serverPeriods: Int = 3

    public init(sampleRate: Int, channels: Int, sampleFormats: [SampleFormat]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.sampleFormats = sampleFormats
    }
}

/// A failure on the playback path. Carries only an errno and a static label so
/// that throwing it never allocates.
public struct OutputFailure: Error, Sendable, Equatable {
    public let code: Int32
    public let operation: StaticString

    package init(code: Int32, operation: StaticString) {
        self.code = code
        self.operation = operation
    }

    public var message: String { "\(operation) failed: \(systemErrorMessage(code))" }

    /// The device went away (unplugged, the sound server stopped): worth reopening later.
    public var isDeviceLoss: Bool { [ENODEV, EIO, EBADFD, ENXIO, ESHUTDOWN, ECONNRESET, EPIPE].contains(code) }

    public static func == (a: OutputFailure, b: OutputFailure) -> Bool {
        a.code == b.code && a.operation.description == b.operation.description
    }
}

/// A device the playback thread writes to. Everything but `interrupt` is
/// called from the playback thread only.
public protocol AudioOutput: AnyObject {
    var deviceName: DeviceName { get }
    var format: OutputFormat { get }
    var periodFrames: Int { get }
    var bufferFrames: Int { get }
    /// A sound server's plugin (pulse, pipewire): another stream opened on the same name is
    /// mixed by the server, not after what this one has buffered.
    var mixedByServer: Bool { get }
    /// Underruns and suspends recovered from so far.
    var recoveries: Int { get }
    /// Frames the device takes now without waiting; recovers underrun and suspend.
    func writableFrames() throws(OutputFailure) -> Int
    /// Writes up to `frames` without blocking; returns how many the device took.
    func write(_ samples: UnsafeRawPointer, frames: Int) throws(OutputFailure) -> Int
    /// Sleeps until the device takes a period, or until `interrupt` is called.
    func waitUntilWritable() throws(OutputFailure)
    /// Sleeps up to `milliseconds`, or until `interrupt` is called; returns true when interrupted.
    @discardableResult
    func waitForInterrupt(milliseconds: Int) -> Bool
    /// Wakes `waitUntilWritable` and `waitForInterrupt` at once. Any thread.
    func interrupt()
    /// Frames written but not yet heard.
    func delay() -> Int
    /// Plays out what is buffered, then is ready for more.
    func drain() throws(OutputFailure)
    /// Discards what is buffered at once, then is ready for more.
    func drop()
    /// Gives the device back now; afterwards only `interrupt` may be called. Any thread, once
    /// nothing plays on it. Idempotent; also done when the object goes away.
    func close()
}
