import AnnounceEngine
import AnnounceModel
import AnnounceOutput
import AnnounceSystem
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Lowers other applications' streams on the sound server while a duck-others item plays
/// (DESIGN §3), on a thread of its own (`announce-duck`): the control thread only says what it
/// wants (`want`), never waits for a server. The rules are `OtherAudioDuck`'s; this lists the
/// streams, sets their volumes, and keeps the journal (RUNTIME/ducked-others) that a daemon
/// killed mid-duck restores from at its next start.
final class OtherAudioDucker: Sendable {
    /// What the control thread wants: a duck to `gain` (1: none) on the server `environment` reaches.
    private struct Wish: Equatable {
        var gain: Double
        var environment: [String: String]?
        var sparedRoles: [String] = []
    }

    private struct Shared {
        var wish = Wish(gain: 1, environment: nil)
        var status = OtherAudioStatus(state: .idle)
        var stopping = false
    }

    private let shared = Mutex(Shared())
    private let wake: EventFD
    private let journalPath: String
    private let logger: Logger
    /// Steps while a ramp runs (about 15 down, 40 up), and the look for new or changed streams while ducked.
    static let rampStepMilliseconds: Int32 = 10
    static let holdStepMilliseconds: Int32 = 50
    static let maxStepSeconds = 0.02
    static let retryMilliseconds: Int32 = 1000
    /// How long (in retries) lowered streams are held for a server that stopped answering.
    static let retriesWhileLowered = 10
    private let finished = CountingSemaphore()

    init(journalPath: String, logger: Logger) throws(AnnounceError) {
        wake = try EventFD()
        self.journalPath = journalPath
        self.logger = logger
        _ = startThread(named: "announce-duck") { [self] in run() }
    }

    /// Duck to `gain` (linear) the server that `environment` reaches, or let go with nil; streams
    /// of `sparedRoles` (a call's) are left as they are.
    func want(gain: Double?, environment: [String: String]?, sparedRoles: [String]) {
        let wish = Wish(gain: gain ?? 1, environment: environment, sparedRoles: sparedRoles)
        let changed = shared.withLock { shared in
            defer { shared.wish = wish }
            return shared.wish != wish
        }
        if changed { wake.signal() }
    }

    var status: OtherAudioStatus { shared.withLock { $0.status } }

    /// Puts every stream back at once (no ramp) and ends the thread; waits at most a second.
    func stop() {
        shared.withLock { $0.stopping = true }
        wake.signal()
        _ = finished.wait(seconds: 1)
    }

    // MARK: the duck thread

    private func run() {
        restoreJournal()
        var duck = OtherAudioDuck(ownProcessID: Int64(getpid()), shape: GainRamp.shape)
        var server: SoundServerStreams?
        var serverEnvironment: [String: String]?
        // The duck's clock: real time, but while a ramp runs at most `maxStepSeconds` per step, so a
        // thread kept from running on a loaded machine stretches the ramp instead of jumping (a click).
        var rampClock = 0.0
        var lastLook = SystemClock.monotonic()
        var unanswered = 0
        while true {
            let (wish, stopping) = shared.withLock { ($0.wish, $0.stopping) }
            let gain = stopping ? 1 : wish.gain
            duck.sparedRoles = wish.sparedRoles
            if gain == 1 && duck.isIdle {
                // Nothing lowered: let the server go, and wait for the next duck.
                server = nil
                publish(OtherAudioStatus(state: .idle))
                if stopping { break }
                _ = wake.wait(milliseconds: -1)
                continue
            }
            if server == nil || (duck.lowered.isEmpty && serverEnvironment != wish.environment) {
                do {
                    server = try SoundServerStreams(environment: wish.environment)
                    serverEnvironment = wish.environment
                    unanswered = 0
                } catch {
                    if !duck.lowered.isEmpty && unanswered < Self.retriesWhileLowered {
                        // Streams are lowered there: keep them (and the journal) and ask again.
                        unanswered += 1
                        logger.warning("duck others: \(error.description); trying again")
                        _ = wake.wait(milliseconds: Self.retryMilliseconds)
                        continue
                    }
                    // Plain ALSA: nothing to duck, no error. A server too busy to answer in time may
                    // answer later: tried again every second while the duck is wanted. (What stays
                    // lowered on a server that never answers again is the journal's, for the next start.)
                    if shared.withLock({ $0.status.state }) != .noSoundServer {
                        logger.info("duck others: nothing to duck (\(error.description))")
                    }
                    server = nil
                    duck.forget()
                    duck.retarget(1, seconds: 0, now: 0)
                    publish(OtherAudioStatus(state: .noSoundServer, reason: error.description))
                    if stopping { break }
                    _ = wake.wait(milliseconds: Self.retryMilliseconds)
                    continue
                }
            }
            // The ramp starts once the server answers: a slow connection must not eat into it.
            let real = SystemClock.monotonic()
            rampClock += duck.isRamping(at: rampClock) ? min(real - lastLook, Self.maxStepSeconds) : real - lastLook
            lastLook = real
            let now = rampClock
            if gain != duck.target {
                duck.retarget(
                    gain, seconds: stopping ? 0 : gain < 1 ? GainRamp.duckDownSeconds : GainRamp.duckUpSeconds,
                    now: now)
            }
            do throws(AnnounceError) {
                try step(&duck, on: server!, environment: serverEnvironment, now: now)
            } catch {
                // Too slow, or gone: connect again. A server that restarted has none of these streams
                // (the next look forgets them); a slow one still has them lowered.
                logger.warning("duck others: \(error.description)")
                server = nil
                _ = wake.wait(milliseconds: Self.holdStepMilliseconds)
                continue
            }
            publish(OtherAudioStatus(state: .ducking, streams: duck.lowered.count))
            if stopping && duck.isIdle { break }
            _ = wake.wait(milliseconds: duck.isRamping(at: now) ? Self.rampStepMilliseconds : Self.holdStepMilliseconds)
        }
        publish(OtherAudioStatus(state: .idle))
        finished.signal()
    }

    private func publish(_ status: OtherAudioStatus) {
        shared.withLock { $0.status = status }
    }

    /// One look at the server: the journal first when a stream is lowered for the first time (with
    /// its place in the restore database, read before), after when one is put back.
    private func step(
        _ duck: inout OtherAudioDuck, on server: SoundServerStreams, environment: [String: String]?,
        now: Double
    ) throws(AnnounceError) {
        let streams = try server.streams()
        var restores: [UInt32: StreamRestore] = [:]
        for stream in duck.newcomers(in: streams) {
            if let place = try server.restorePlace(of: stream.index) { restores[stream.index] = place }
        }
        let step = duck.step(streams, restores: restores, now: now)
        let journal = step.journal.map { OtherAudioJournal(environment: environment, streams: $0) }
        if step.journalFirst, let journal { writeJournal(journal) }
        for change in step.changes { try server.setVolume(change) }
        for entry in step.restoreEntries { try writeRestore(entry, on: server) }
        writeAgainLater(step.restoreEntries, environment: environment)
        if !step.journalFirst, let journal {
            if journal.streams.isEmpty { removeJournal() } else { writeJournal(journal) }
        }
    }

    /// A stream ended while lowered: its application's restore entry is put back as it was.
    private func writeRestore(_ entry: RestoreEntry, on server: SoundServerStreams) throws(AnnounceError) {
        if try !server.writeRestore(entry) {
            logger.warning("duck others: the sound server refused the restore entry \(entry.name)")
        }
    }

    /// WirePlumber can save an ended stream's last (lowered) volume after its entry was put back: it reads a
    /// stream's changed properties with a round trip of its own, late on a loaded machine (seen in a test run
    /// where the daemon put the entry back within 0.1 s of the stream's end). So the entries are written
    /// again 1 s and 3 s later, from a thread of their own, on PipeWire only: PulseAudio keeps what was
    /// written, and a volume its user set meanwhile must stay. (pipewire-pulse cannot read back what
    /// WirePlumber saved, so a volume set there within those 3 s is replaced.)
    private func writeAgainLater(_ entries: [RestoreEntry], environment: [String: String]?) {
        guard !entries.isEmpty else { return }
        // Detached: nobody waits for it (a daemon that stops meanwhile needs no second write).
        pthread_detach(
            startThread(named: "announce-restore") { [logger] in
                for delay: UInt32 in [1, 2] {
                    sleep(delay)
                    do throws(AnnounceError) {
                        let server = try SoundServerStreams(environment: environment)
                        guard try server.isPipeWire() else { return }
                        for entry in entries { try server.writeRestore(entry) }
                    } catch {
                        logger.info("duck others: restore entries not written again (\(error.description))")
                    }
                }
            })
    }

    private func writeJournal(_ journal: OtherAudioJournal) {
        do {
            try writeFileAtomically(JSONCoding.encode(journal, orElse: "{}"), to: journalPath)
        } catch {
            logger.error("duck others: \(error.description)")
        }
    }

    private func removeJournal() {
        unlink(journalPath)
    }

    /// A previous daemon was killed mid-duck: put back what its journal says it lowered (a
    /// stream that is gone, or whose server is, needs nothing).
    private func restoreJournal() {
        guard let bytes = readWholeFile(journalPath) else { return }
        defer { removeJournal() }
        guard let journal = try? JSONCoding.decode(OtherAudioJournal.self, from: bytes) else {
            return logger.warning("duck others: \(journalPath) is unreadable; removed")
        }
        do throws(AnnounceError) {
            let server = try SoundServerStreams(environment: journal.environment)
            let streams = try server.streams()
            var restored = 0
            // A stream still there gets its volume back; one that ended while lowered, its restore entry.
            var ended: [RestoreEntry] = []
            for lowered in journal.streams {
                if streams.contains(where: { lowered.matches($0) }) {
                    if try server.setVolume(VolumeChange(index: lowered.index, volume: lowered.original)) {
                        restored += 1
                    }
                } else if let entry = lowered.entryAfterEnd {
                    ended.append(entry)
                }
            }
            for entry in ended { try writeRestore(entry, on: server) }
            writeAgainLater(ended, environment: journal.environment)
            restored += ended.count
            logger.info("duck others: restored \(restored) stream(s) a previous daemon had lowered")
        } catch {
            logger.info("duck others: nothing to restore (\(error.description))")
        }
    }
}
