import AnnounceModel
import AnnounceSystem
import CALSA
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A PCM playback device through ALSA, negotiated the way aplay and out123 do:
/// interleaved access, a sample format the device takes, channels, rate-near with
/// a tolerance check, period before buffer, a start threshold of one period.
/// Writes are non-blocking; the playback thread sleeps in poll() on the
/// device's descriptors and an eventfd that `interrupt` writes to.
public final class ALSAOutput: AudioOutput {
    public let deviceName: DeviceName
    public let format: OutputFormat
    public let periodFrames: Int
    public let bufferFrames: Int
    public let mixedByServer: Bool
    public private(set) var recoveries = 0
    private let pcm: OpaquePointer
    /// The device's poll descriptors, then the eventfd; made at open.
    private let pollDescriptors: UnsafeMutablePointer<pollfd>
    private let devicePollCount: Int
    private let interruption: EventFD

    /// Largest relative rate error accepted from rate-near before refusing (0.5%).
    static let rateTolerance = 0.005

    /// Set once, before the first open; a user's explicit values win.
    /// - Each PCM is used by one thread at a time (opened and closed while the
    ///   playback thread is idle), so ALSA's per-call locking is pure cost.
    /// - Through PulseAudio's or PipeWire's ALSA plugin, streams say they are
    ///   announcements (media.role=announce), so the desktop's role-based ducking
    ///   lowers music and video while they play.
    package static let processEnvironment: Void = {
        setenv("LIBASOUND_THREAD_SAFE", "0", 0)
        setenv("PULSE_PROP", mediaRoleProperties(pulse: getenv("PULSE_PROP").map { String(cString: $0) }), 1)
        setenv("PIPEWIRE_ALSA", #"{ media.role = "announce" }"#, 0)
    }()

    /// The user's PULSE_PROP with media.role=announce added unless it names a role.
    static func mediaRoleProperties(pulse existing: String?) -> String {
        guard let existing, !existing.isEmpty else { return "media.role=announce" }
        return existing.contains("media.role") ? existing : existing + " media.role=announce"
    }

    public init(device: DeviceName, request: OutputRequest) throws(AnnounceError) {
        deviceName = device
        Self.processEnvironment
        interruption = try EventFD()
        var handle: OpaquePointer?
        // Non-blocking: a busy device fails at once instead of hanging a cron job,
        // and a stop never waits behind a blocked write.
        let opened = snd_pcm_open(&handle, device.rawValue, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        guard opened == 0, let pcm = handle else { throw Self.openError(device, opened) }
        self.pcm = pcm
        do {
            (format, periodFrames, bufferFrames) = try Self.configure(pcm, device: device, request: request)
            mixedByServer = snd_pcm_type(pcm) == SND_PCM_TYPE_IOPLUG
        } catch {
            snd_pcm_close(pcm)
            throw error
        }
        devicePollCount = max(0, Int(snd_pcm_poll_descriptors_count(pcm)))
        pollDescriptors = .allocate(capacity: devicePollCount + 1)
        pollDescriptors.initialize(repeating: pollfd(), count: devicePollCount + 1)
        _ = snd_pcm_poll_descriptors(pcm, pollDescriptors, UInt32(devicePollCount))
        pollDescriptors[devicePollCount] = pollfd(fd: interruption.fd, events: Int16(POLLIN), revents: 0)
    }

    /// Set once the PCM is closed (by `close` or deinit); only the interrupt descriptor outlives it.
    private let closed = Atomic<Bool>(false)

    public func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { snd_pcm_close(pcm) }
    }

    deinit {
        close()
        pollDescriptors.deallocate()
    }

    public func writableFrames() throws(OutputFailure) -> Int {
        let available = snd_pcm_avail_update(pcm)
        if available >= 0 { return Int(available) }
        try recover(Int32(-available))
        return 0
    }

    public func write(_ samples: UnsafeRawPointer, frames: Int) throws(OutputFailure) -> Int {
        let written = snd_pcm_writei(pcm, samples, snd_pcm_uframes_t(frames))
        if written >= 0 { return Int(written) }
        try recover(Int32(-written))
        return 0
    }

    public func waitUntilWritable() throws(OutputFailure) {
        let count = nfds_t(devicePollCount + 1)
        while poll(pollDescriptors, count, -1) < 0 {
            guard errno == EINTR else { throw OutputFailure(code: errno, operation: "poll") }
        }
        if pollDescriptors[devicePollCount].revents != 0 { interruption.drain() }
        var events: UInt16 = 0
        _ = snd_pcm_poll_descriptors_revents(pcm, pollDescriptors, UInt32(devicePollCount), &events)
        if Int32(events) & Int32(POLLERR) != 0 {
            // An xrun or suspend shows up as POLLERR; the state says which.
            switch snd_pcm_state(pcm) {
            case SND_PCM_STATE_XRUN: try recover(EPIPE)
            case SND_PCM_STATE_SUSPENDED: try recover(ESTRPIPE)
            case SND_PCM_STATE_DISCONNECTED: throw OutputFailure(code: ENODEV, operation: "poll")
            default: break
            }
        }
    }

    @discardableResult
    public func waitForInterrupt(milliseconds: Int) -> Bool {
        interruption.wait(milliseconds: Int32(clamping: milliseconds))
    }

    public func interrupt() {
        interruption.signal()
    }

    private func recover(_ code: Int32) throws(OutputFailure) {
        switch code {
        case EINTR:
            return
        case EAGAIN:
            return  // the buffer is full; the caller waits in poll
        case EPIPE:
            recoveries += 1
            guard snd_pcm_prepare(pcm) == 0 else { throw OutputFailure(code: EPIPE, operation: "underrun recovery") }
        case ESTRPIPE:
            recoveries += 1
            var status = snd_pcm_resume(pcm)
            while status == -EAGAIN {
                usleep(10_000)  // the system is resuming from suspend
                status = snd_pcm_resume(pcm)
            }
            if status < 0, snd_pcm_prepare(pcm) < 0 {
                throw OutputFailure(code: ESTRPIPE, operation: "suspend recovery")
            }
        default:
            throw OutputFailure(code: code, operation: "write")
        }
    }

    public func delay() -> Int {
        var frames: snd_pcm_sframes_t = 0
        return snd_pcm_delay(pcm, &frames) == 0 ? max(0, Int(frames)) : 0
    }

    public func drain() throws(OutputFailure) {
        // Blocking for the drain only: ALSA's non-blocking drain is uneven across plugins.
        _ = snd_pcm_nonblock(pcm, 0)
        let status = snd_pcm_drain(pcm)
        _ = snd_pcm_nonblock(pcm, 1)
        if status < 0, status != -EPIPE { throw OutputFailure(code: -status, operation: "drain") }
        _ = snd_pcm_prepare(pcm)
    }

    public func drop() {
        _ = snd_pcm_drop(pcm)
        _ = snd_pcm_prepare(pcm)
    }

    // MARK: negotiation

    private static func configure(_ pcm: OpaquePointer, device: DeviceName, request: OutputRequest)
        throws(AnnounceError)
        -> (OutputFormat, Int, Int)
    {
        guard let hw = announce_hw_params_new() else { throw .internal("out of memory for ALSA hw params") }
        defer { snd_pcm_hw_params_free(hw) }
        try check(snd_pcm_hw_params_any(pcm, hw), device, "has no configurations")
        try check(
            snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED), device,
            "does not take interleaved writes")
        guard
            let sampleFormat = request.sampleFormats.first(where: {
                isDescribable($0, pcm) && snd_pcm_hw_params_test_format(pcm, hw, alsaFormat($0)) == 0
            })
        else {
            throw .deviceUnavailable(device: device, reason: "takes none of the sample formats float, S32, S16")
        }
        try check(snd_pcm_hw_params_set_format(pcm, hw, alsaFormat(sampleFormat)), device, "refused \(sampleFormat)")
        try check(
            snd_pcm_hw_params_set_channels(pcm, hw, UInt32(request.channels)), device,
            "cannot play \(request.channels) channel\(request.channels == 1 ? "" : "s")")
        var rate = UInt32(request.sampleRate)
        var dir: Int32 = 0
        try check(snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, &dir), device, "cannot play \(request.sampleRate) Hz")
        if abs(Double(rate) - Double(request.sampleRate)) > Double(request.sampleRate) * rateTolerance {
            throw .deviceUnavailable(
                device: device,
                reason:
                    "plays \(rate) Hz, not \(request.sampleRate) Hz (use a plug device such as 'default' or 'plughw:0')"
            )
        }
        let isServer = snd_pcm_type(pcm) == SND_PCM_TYPE_IOPLUG
        var periodTime = UInt32(isServer ? request.serverPeriodMicroseconds : request.periodMicroseconds)
        try check(snd_pcm_hw_params_set_period_time_near(pcm, hw, &periodTime, &dir), device, "refused the period time")
        var period: snd_pcm_uframes_t = 0
        try check(snd_pcm_hw_params_get_period_size(hw, &period, &dir), device, "has no period size")
        var buffer = period * snd_pcm_uframes_t(isServer ? request.serverPeriods : request.periods)
        try check(snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer), device, "refused the buffer size")
        try check(snd_pcm_hw_params(pcm, hw), device, "refused the hardware parameters")
        try check(snd_pcm_hw_params_get_period_size(hw, &period, &dir), device, "has no period size")
        try check(snd_pcm_hw_params_get_buffer_size(hw, &buffer), device, "has no buffer size")

        guard let sw = announce_sw_params_new() else { throw .internal("out of memory for ALSA sw params") }
        defer { snd_pcm_sw_params_free(sw) }
        try check(snd_pcm_sw_params_current(pcm, sw), device, "has no software parameters")
        // Start after one period so a 100 ms clip starts without waiting for a full buffer.
        try check(snd_pcm_sw_params_set_start_threshold(pcm, sw, period), device, "refused the start threshold")
        try check(snd_pcm_sw_params_set_avail_min(pcm, sw, period), device, "refused avail_min")
        try check(snd_pcm_sw_params(pcm, sw), device, "refused the software parameters")
        try check(snd_pcm_prepare(pcm), device, "cannot be prepared")

        let format = OutputFormat(sampleFormat: sampleFormat, sampleRate: Int(rate), channels: request.channels)
        return (format, Int(period), Int(buffer))
    }

    /// ALSA's file plugin writes a WAV header saying integer PCM whatever the format, so float
    /// samples there would be read back as loud noise. S32 rather than S16 for float sources:
    /// it keeps the decoders' 24-bit precision, so the capture still matches their output.
    private static func isDescribable(_ format: SampleFormat, _ pcm: OpaquePointer) -> Bool {
        format != .float32 || snd_pcm_type(pcm) != SND_PCM_TYPE_FILE
    }

    private static func alsaFormat(_ format: SampleFormat) -> snd_pcm_format_t {
        switch format {
        case .float32: SND_PCM_FORMAT_FLOAT_LE
        case .int32: SND_PCM_FORMAT_S32_LE
        case .int16: SND_PCM_FORMAT_S16_LE
        }
    }

    private static func check(_ status: Int32, _ device: DeviceName, _ what: @autoclosure () -> String)
        throws(AnnounceError)
    {
        guard status < 0 else { return }
        throw .deviceUnavailable(device: device, reason: "\(what()): \(String(cString: snd_strerror(status)))")
    }

    static func openError(_ device: DeviceName, _ status: Int32) -> AnnounceError {
        if -status == EBUSY { return .deviceBusy(device: device, reason: DeviceHolders.busyReason(device: device)) }
        let reason =
            switch -status {
            case ENOENT, ENODEV, ENXIO: "no such device"
            case ECONNREFUSED: "the sound server refused the connection (is it running?)"
            case EACCES, EPERM: "permission denied"
            default: "cannot open: \(String(cString: snd_strerror(status)))"
            }
        return .deviceUnavailable(device: device, reason: reason)
    }
}
