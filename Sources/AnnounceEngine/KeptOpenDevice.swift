import AnnounceOutput
import AnnounceSystem
import CPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A device kept open between streams (`keep-open`): once its last stream is heard, the
/// playback thread feeds it silence, at most one period ahead of what is heard, until the
/// decode side lets go of it to close or reopen it. Never the device's last reference: the
/// engine holds it until `letGo` returns.
final class KeptOpenDevice: @unchecked Sendable {
    // Playback thread only.
    private var device: OpenDevice?
    /// When the silence began (monotonic ns; 0: not yet) and how much went out since: a device
    /// that takes what it is given at once (null, a file) gets it at the clock's pace.
    private var silenceStart: UInt64 = 0
    private var silenceWritten = 0
    /// A silent write failed: left alone until a stream meets the failure and reports it.
    private var failed = false
    private var answered = 0

    // Decode side to playback thread.
    private let requests = Atomic<Int>(0)
    private let letGone = CountingSemaphore()

    /// The device to feed now, if any. Playback thread.
    var toFeed: OpenDevice? { failed ? nil : device }

    /// A let-go waits for an answer. Playback thread.
    var isAsked: Bool { requests.load(ordering: .acquiring) != answered }

    /// A stream starts on `device`: kept open after it, when it is one that stays open. Playback thread.
    func adopt(_ device: OpenDevice) {
        guard device.silence != nil, self.device !== device else { return }
        self.device = device
        failed = false
    }

    /// Sound other than silence was written: the next silence starts its own clock. Playback thread.
    func soundWritten() {
        silenceStart = 0
    }

    /// Lets go of the device for each let-go asked for. Playback thread.
    func answer() {
        let asked = requests.load(ordering: .acquiring)
        while answered < asked {
            device = nil
            answered += 1
            letGone.signal()
        }
    }

    /// Writes silence up to one period ahead (`ahead` frames are buffered now), then sleeps until
    /// half a period is left, or a stream or a let-go interrupts. Playback thread.
    func feed(_ device: OpenDevice, ahead: Int) {
        let output = device.output
        let rate = output.format.sampleRate
        let period = output.periodFrames
        var clock = timespec()
        clock_gettime(CLOCK_MONOTONIC, &clock)  // the vDSO: no system call
        let now = UInt64(clock.tv_sec) &* 1_000_000_000 &+ UInt64(clock.tv_nsec)
        if silenceStart == 0 { (silenceStart, silenceWritten) = (now, 0) }
        let due = Int((now - silenceStart) &* UInt64(rate) / 1_000_000_000) + period - silenceWritten
        let frames = min(period - ahead, due)
        var buffered = ahead
        if let zeros = device.silence, frames > 0 {
            do {
                let taken = try output.write(zeros, frames: frames)
                device.written += taken
                silenceWritten += taken
                buffered += taken
            } catch {
                failed = true
                return
            }
        }
        output.waitForInterrupt(milliseconds: max(1, (buffered - period / 2) * 1000 / rate))
    }

    /// Decode side, before it closes or reopens `device`: returns once the playback thread
    /// (woken through `wake` or the device) no longer feeds it.
    func letGo(_ device: OpenDevice, wake: Wakeup) {
        guard device.silence != nil else { return }
        requests.add(1, ordering: .releasing)
        wake.signal()
        device.output.interrupt()
        letGone.wait()
    }
}
