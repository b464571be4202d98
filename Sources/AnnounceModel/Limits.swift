/// Every limit a request or a source is held to, and the defaults a request falls back to,
/// each defined once: the client checks its options against them before it sends, the daemon
/// checks what it receives (`Request.problem`; docs/protocol.md, "Errors and limits"), decoders
/// check headers and the mixer maps channels up to them.
public enum Limits {
    /// Longest path (`clip.path`, `alert.path`) and sound-server variable value, in bytes.
    public static let maxPathBytes = 4096
    /// Longest device name, in bytes: `--device`, `clip.device`, the config file's `device`.
    public static let maxDeviceNameBytes = 1024
    /// Most devices one clip plays on (`clip.device`, the daemon's when absent, and `clip.extraDevices`).
    public static let maxDevices = 8
    /// Longest `--tag`, in bytes.
    public static let maxTagBytes = 256
    /// Most items in one `play` request.
    public static let maxItemsPerPlay = 1000
    /// Most command-line arguments: ArgumentParser's time grows with the square of the positional
    /// ones (16,000 words to `say` took 7 s of CPU); 4096 take 0.5 s, and hold a full `play`.
    public static let maxArguments = 4096
    /// Most descriptors one request may hand over (system queue): an item's audio and two chimes.
    public static let maxHandedFiles = 3 * maxItemsPerPlay
    /// More extra passes than this is a typo; -1 repeats forever.
    public static let maxLoops = 1_000_000
    /// Linear gain of a clip or an alert.
    public static let gain: ClosedRange<Float> = 0...16
    /// `--gain`'s top, in dB: the whole dB below `gain`'s top (16 is 24.08 dB), so that any
    /// `--gain` the CLI takes is a gain the daemon takes.
    public static let maxGainDecibels = 24.0
    /// Balance, full left to full right.
    public static let pan: ClosedRange<Float> = -1...1
    /// The heard fraction `dropAfter` is given as.
    public static let dropAfter: ClosedRange<Double> = 0...1
    /// The latest `at`, in seconds since the epoch (the year 5138): anything later is a typo.
    public static let latestTime = 1e11
    /// Most channels a source may have: a header saying more is corrupt, not a layout.
    public static let maxChannels = 32
    /// Sample rates a source may have, in Hz: below 16 Hz libebur128 measures nothing, so the
    /// level could not be set; a header saying less (or over 768 kHz) is corrupt, not audio.
    public static let sampleRates = 16...768_000
    /// Longest text `announce say` speaks, in bytes: with JSON's worst escaping (6 bytes a
    /// control character) it still fits a request line (`WireProtocol.maxLineBytes`).
    public static let maxSpeechBytes = 160 * 1024
    /// Most bytes `announce play -` takes from stdin, and `announce play URL` downloads. The
    /// client stores the audio whole in the runtime directory before the daemon acknowledges it
    /// (usually a tmpfs, so memory): 256 MiB holds 8 hours of 64 kbps MP3, or 25 minutes of
    /// CD-quality WAV.
    public static let maxMediaBytes = 256 << 20
    /// `--speed`, in words per minute.
    public static let speechSpeed: ClosedRange<Int> = 80...500
    /// Tempo (`--rate`, `clip.rate`), pitch kept: libsonic stays clean from a quarter to eight
    /// times the speed (a 440 Hz tone stays within 2 Hz up to 2×, 3 Hz at 8×).
    public static let rate: ClosedRange<Double> = 0.25...8
    /// Pitch shift in semitones (`--pitch`, `clip.pitch`), length kept: an octave either way;
    /// beyond it libsonic's plain interpolation aliases audibly.
    public static let pitch: ClosedRange<Double> = -12...12
    /// A play's loudness target in LUFS (`--loudness`, `clip.loudness`, the config file's `loudness`).
    public static let loudness: ClosedRange<Double> = -40...(-5)
    /// `wake-up` (seconds): the silence before the first item when the device opens.
    public static let wakeUp: ClosedRange<Double> = 0...5
    /// `keep-open`: the default grace (100 ms, writing nothing) up to an hour of silence.
    public static let keepOpen: ClosedRange<Double> = 0.1...3600
    /// `silence-gap` (seconds): the longest pause `--skip-silence` leaves inside a clip.
    public static let silenceGap: ClosedRange<Double> = 0.05...10
    /// `silence-level` (dBFS): below it, on every channel, a frame counts as silence.
    public static let silenceLevel: ClosedRange<Double> = -90...(-20)
}

// The defaults of what a request leaves out (docs/protocol.md, ItemRequest), for the CLI's
// options, the daemon and QueueItem alike.

extension QueueItem {
    /// A preempted item that had this fraction heard ends `dropped` instead of resuming (`--drop-after`).
    public static let defaultDropAfter = 0.8
    /// An item outranking the playing one preempts it (false: `--no-interrupt`).
    public static let defaultInterrupts = true
}

extension Priority {
    public static let `default` = Priority.normal
}

extension InterruptAction {
    public static let `default` = InterruptAction.resume
}

extension IfBusy {
    public static let `default` = IfBusy.wait
}
