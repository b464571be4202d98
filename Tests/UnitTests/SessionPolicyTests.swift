import Foundation
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

// Expectations here are written out by hand from DESIGN §3 and never computed by the code under test.

/// Every subset of the four options, notify-others included.
private let allOptions: [SessionOptions] = (0..<16).map { bits in
    SessionOptions(
        mixWithOthers: bits & 1 != 0, duckOthers: bits & 2 != 0,
        interruptSpokenAudioAndMixWithOthers: bits & 4 != 0, notifyOthersOnDeactivation: bits & 8 != 0)
}

/// One row of DESIGN's category table, spelled out per option.
private struct CategoryRow {
    /// Lane with neither mix option.
    var plain: SessionLane
    /// Lane with `--mix-with-others`.
    var withMixWithOthers: SessionLane
    /// Lane with `--interrupt-spoken-audio`.
    var withInterruptSpokenAudio: SessionLane
    var silencedByQuietMode: Bool

    func lane(_ options: SessionOptions) -> SessionLane {
        var lanes = [plain]
        if options.mixWithOthers { lanes.append(withMixWithOthers) }
        if options.interruptSpokenAudioAndMixWithOthers { lanes.append(withInterruptSpokenAudio) }
        return lanes.contains(.mixed) ? .mixed : .main
    }
}

private let categoryTable: [SessionCategory: CategoryRow] = [
    //                        plain   +mix-with-others  +interrupt-spoken-audio  quiet silences
    .ambient: CategoryRow(
        plain: .mixed, withMixWithOthers: .mixed, withInterruptSpokenAudio: .mixed, silencedByQuietMode: true),
    .soloAmbient: CategoryRow(
        plain: .main, withMixWithOthers: .main, withInterruptSpokenAudio: .main, silencedByQuietMode: true),
    .playback: CategoryRow(
        plain: .main, withMixWithOthers: .mixed, withInterruptSpokenAudio: .mixed, silencedByQuietMode: false),
    .multiRoute: CategoryRow(
        plain: .main, withMixWithOthers: .mixed, withInterruptSpokenAudio: .mixed, silencedByQuietMode: false)
]

/// The kinds of stream already active when the new one activates.
private enum Kind: CaseIterable {
    case bed  // ambient, default mode: mixes
    case podcast  // ambient, spoken-audio: mixes
    case main  // solo-ambient, default mode: the main lane
    case mainSpoken  // playback, spoken-audio: the main lane
    case duckingBed  // ambient + duck-others: mixes and ducks
    case mainDucker  // solo-ambient + duck-others: the main lane, ducks
    case held  // solo-ambient, already interrupted by a session that is not in the list

    var session: AudioSession {
        switch self {
        case .bed: AudioSession(category: .ambient)
        case .podcast: AudioSession(category: .ambient, mode: .spokenAudio)
        case .main: AudioSession(category: .soloAmbient)
        case .mainSpoken: AudioSession(category: .playback, mode: .spokenAudio)
        case .duckingBed: AudioSession(category: .ambient, options: SessionOptions(duckOthers: true))
        case .mainDucker: AudioSession(category: .soloAmbient, options: SessionOptions(duckOthers: true))
        case .held: AudioSession(category: .soloAmbient)
        }
    }

    var ducksOthers: Bool { self == .duckingBed || self == .mainDucker }
    var alreadyInterrupted: Bool { self == .held }
}

/// What activating a session does to a stream of each kind:
/// columns are (new session on the main lane?, new session has --interrupt-spoken-audio?).
private func interruption(of kind: Kind, newOnMain: Bool, interruptSpoken: Bool) -> InterruptionReason? {
    let N = InterruptionReason.nonMixableActivation
    let S = InterruptionReason.spokenAudioInterrupted
    let table:
        [Kind: (
            main: InterruptionReason?, mainSpoken: InterruptionReason?, mixed: InterruptionReason?,
            mixedSpoken: InterruptionReason?
        )] = [
            //             main lane  main+spoken  mixed  mixed+spoken
            .bed: (nil, nil, nil, nil),
            .podcast: (nil, S, nil, S),
            .main: (N, N, nil, nil),
            .mainSpoken: (N, N, nil, S),
            .duckingBed: (nil, nil, nil, nil),
            .mainDucker: (N, N, nil, nil),
            .held: (N, N, nil, nil)
        ]
    let row = table[kind]!
    switch (newOnMain, interruptSpoken) {
    case (true, false): return row.main
    case (true, true): return row.mainSpoken
    case (false, false): return row.mixed
    case (false, true): return row.mixedSpoken
    }
}

/// The mixes of active streams each combination is tried against (ids are the kinds' names).
private let backgrounds: [[Kind]] = [
    [],
    [.bed],
    [.podcast],
    [.main],
    [.mainSpoken],
    [.bed, .podcast, .main],
    [.duckingBed, .bed],
    [.mainDucker, .bed, .podcast],
    [.held, .podcast]
]

private func id(_ kind: Kind) -> ItemID { "\(kind)" }

/// Hand-set initial state: ducked when another kind in the set ducks.
private func initialStreams(_ kinds: [Kind]) -> [ActiveStream] {
    kinds.map { kind in
        ActiveStream(
            id: id(kind), session: kind.session, interruptedBy: kind.alreadyInterrupted ? ["elsewhere"] : [],
            ducked: !kind.ducksOthers && kinds.contains { $0 != kind && $0.ducksOthers && !$0.alreadyInterrupted })
    }
}

@Suite struct SessionPolicyTests {
    // MARK: Model

    @Test func categoryPropertiesForEveryOptionCombination() {
        for category in SessionCategory.allCases {
            let row = categoryTable[category]!
            for options in allOptions {
                for mode in SessionMode.allCases {
                    let session = AudioSession(category: category, options: options, mode: mode)
                    let lane = row.lane(options)
                    #expect(session.lane == lane, "\(session)")
                    #expect(session.mixesWithOthers == (lane == .mixed), "\(session)")
                    #expect(session.interruptsNonMixable == (lane == .main), "\(session)")
                    #expect(session.interruptsSpokenAudio == options.interruptSpokenAudioAndMixWithOthers, "\(session)")
                    #expect(session.category.silencedByQuietMode == row.silencedByQuietMode, "\(session)")
                }
            }
        }
    }

    @Test func designTableWithDefaultOptions() {
        // category: mixes with others, interrupts non-mixable, silenced by quiet mode (DESIGN §3)
        let rows: [(SessionCategory, Bool, Bool, Bool)] = [
            (.ambient, true, false, true),
            (.soloAmbient, false, true, true),
            (.playback, false, true, false),
            (.multiRoute, false, true, false)
        ]
        for (category, mixes, interrupts, silenced) in rows {
            let session = AudioSession(category: category)
            #expect(session.mixesWithOthers == mixes)
            #expect(session.interruptsNonMixable == interrupts)
            #expect(category.silencedByQuietMode == silenced)
        }
        #expect(AudioSession().category == .soloAmbient)
        #expect(AudioSession().options.notifyOthersOnDeactivation)
        #expect(AudioSession(category: .playback, options: SessionOptions(mixWithOthers: true)).mixesWithOthers)
    }

    // MARK: The policy table

    /// Every category x option subset x background: activation, then deactivation.
    @Test func policyTableForEveryCombination() {
        var cases = 0
        for category in SessionCategory.allCases {
            for options in allOptions {
                for kinds in backgrounds {
                    check(AudioSession(category: category, options: options), against: kinds)
                    cases += 1
                }
            }
        }
        #expect(cases == 4 * 16 * backgrounds.count)
    }

    private func check(_ session: AudioSession, against kinds: [Kind]) {
        let label = "\(session) over \(kinds)"
        let lane = categoryTable[session.category]!.lane(session.options)
        let ducks = session.options.duckOthers
        let notify = session.options.notifyOthersOnDeactivation

        // Expected activation.
        var expectedInterrupted: [Interruption] = []
        var interruptedByNew: Set<Kind> = []
        for kind in kinds {
            guard
                let reason = interruption(
                    of: kind, newOnMain: lane == .main,
                    interruptSpoken: session.options.interruptSpokenAudioAndMixWithOthers)
            else { continue }
            interruptedByNew.insert(kind)
            if !kind.alreadyInterrupted {
                expectedInterrupted.append(Interruption(id: id(kind), by: "new", reason: reason))
            }
        }
        let start = initialStreams(kinds)
        let playingDuckers = kinds.filter { $0.ducksOthers && !$0.alreadyInterrupted && !interruptedByNew.contains($0) }
        var expectedDucking = DuckChanges()
        for (kind, before) in zip(kinds, start) {
            let after = !kind.ducksOthers && (ducks || playingDuckers.contains { $0 != kind })
            if after && !before.ducked { expectedDucking.ducked.append(id(kind)) }
            if !after && before.ducked { expectedDucking.unducked.append(id(kind)) }
        }
        let expected = PolicyDecision(
            id: "new", startsDucked: !ducks && !playingDuckers.isEmpty,
            interrupted: expectedInterrupted, ducking: expectedDucking)

        var policy = SessionPolicy(streams: start)
        let decision = policy.activate("new", session: session)
        #expect(decision == expected, "\(label)")
        let afterActivation = policy.streams

        // Expected deactivation: those it interrupted end (unless something else still holds them),
        // resuming only with notify-others; the ducking goes back to what the resumed duckers do.
        let expectedEnded = kinds.filter { interruptedByNew.contains($0) && !$0.alreadyInterrupted }
            .map { InterruptionEnd(id: id($0), by: "new", shouldResume: notify) }
        let duckersAfter = kinds.filter {
            $0.ducksOthers && !$0.alreadyInterrupted && (notify || !interruptedByNew.contains($0))
        }
        var expectedRestore = DuckChanges()
        for (kind, before) in zip(kinds, afterActivation) {
            let after = !kind.ducksOthers && duckersAfter.contains { $0 != kind }
            if after && !before.ducked { expectedRestore.ducked.append(id(kind)) }
            if !after && before.ducked { expectedRestore.unducked.append(id(kind)) }
        }
        let end = policy.deactivate("new")
        #expect(end == DeactivationDecision(id: "new", ended: expectedEnded, ducking: expectedRestore), "\(label)")
        #expect(policy["new"] == nil, "\(label)")
        #expect(policy.streams.map(\.id) == kinds.map(id), "\(label): every other stream is still there")
        #expect(Set(policy.awaitingResume) == (notify ? [] : Set(expectedEnded.map(\.id))), "\(label)")
        if let held = policy["held"] {
            #expect(held.interruptedBy == ["elsewhere"], "\(label)")
            #expect(held.awaitsResume == (!notify && interruptedByNew.contains(.held)), "\(label)")
        }
        if notify {
            #expect(policy.streams == start, "\(label): back where it started")
        }
    }

    // MARK: Parsing

    @Test(arguments: [
        ("ambient", SessionCategory.ambient), ("solo-ambient", .soloAmbient), ("soloAmbient", .soloAmbient),
        ("SOLO_AMBIENT", .soloAmbient), ("playback", .playback), ("multi-route", .multiRoute),
        ("multiRoute", .multiRoute)
    ])
    func parsesCategories(_ text: String, _ category: SessionCategory) throws {
        #expect(try SessionCategory(parsing: text) == category)
    }

    @Test(arguments: [
        ("record", "announce only plays: category 'record' needs a microphone"),
        ("play-and-record", "announce only plays: category 'play-and-record' needs a microphone; use 'playback'"),
        ("playAndRecord", "announce only plays: category 'play-and-record' needs a microphone; use 'playback'"),
        (
            "audio-processing",
            "announce only plays: category 'audio-processing' processes audio offline and plays nothing; use 'playback'"
        ),
        ("loud", "unknown category 'loud'; valid: ambient, solo-ambient, playback, multi-route"),
        ("", "unknown category ''; valid: ambient, solo-ambient, playback, multi-route")
    ])
    func refusesCategories(_ text: String, _ message: String) {
        #expect(throws: AnnounceError.usage(message)) { try SessionCategory(parsing: text) }
        #expect(AnnounceError.usage(message).exitCode == 64)
        #expect(!message.contains("\n"))
    }

    @Test func parsesModes() throws {
        #expect(try SessionMode(parsing: "default") == .default)
        #expect(try SessionMode(parsing: "spoken-audio") == .spokenAudio)
        #expect(try SessionMode(parsing: "spokenAudio") == .spokenAudio)
        #expect(try SessionMode(parsing: "voice-prompt") == .voicePrompt)
        #expect(throws: AnnounceError.usage("announce only plays: mode 'voice-chat' needs a microphone")) {
            try SessionMode(parsing: "voiceChat")
        }
        #expect(throws: AnnounceError.usage("unknown mode 'podcast'; valid: default, spoken-audio, voice-prompt")) {
            try SessionMode(parsing: "podcast")
        }
    }

    @Test func codableWithKebabCaseValuesAndDefaults() throws {
        let session = AudioSession(
            category: .soloAmbient,
            options: SessionOptions(duckOthers: true, notifyOthersOnDeactivation: false),
            mode: .spokenAudio)
        let json = String(decoding: try JSONEncoder().encode(session), as: UTF8.self)
        #expect(json.contains("\"solo-ambient\""))
        #expect(json.contains("\"spoken-audio\""))
        #expect(try JSONDecoder().decode(AudioSession.self, from: Data(json.utf8)) == session)
        #expect(try JSONDecoder().decode(SessionCategory.self, from: Data("\"multi-route\"".utf8)) == .multiRoute)
        // Missing keys take the defaults: notify-others is on.
        #expect(try JSONDecoder().decode(AudioSession.self, from: Data("{}".utf8)) == AudioSession())
        let options = try JSONDecoder().decode(SessionOptions.self, from: Data("{\"duckOthers\":true}".utf8))
        #expect(options == SessionOptions(duckOthers: true, notifyOthersOnDeactivation: true))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(SessionCategory.self, from: Data("\"record\"".utf8))
        }
    }

    @Test func describesItselfInFlags() {
        #expect(AudioSession().description == "solo-ambient")
        let session = AudioSession(
            category: .playback,
            options: SessionOptions(mixWithOthers: true, notifyOthersOnDeactivation: false),
            mode: .spokenAudio)
        #expect(session.description == "playback (mix-with-others, no-notify-others) spoken-audio")
        #expect(AudioSession(category: .soloAmbient, options: SessionOptions(mixWithOthers: true)).warnings.count == 1)
        #expect(AudioSession(category: .playback, options: SessionOptions(mixWithOthers: true)).warnings.isEmpty)
    }

    // MARK: Scenarios

    @Test func duckingAcrossTwoDuckOthersSessionsEndsWithTheLast() {
        var policy = SessionPolicy()
        let bed = policy.activate(
            "bed", session: AudioSession(category: .ambient, options: SessionOptions(mixWithOthers: true)))
        #expect(bed == PolicyDecision(id: "bed"))

        let first = policy.activate("first", session: AudioSession(options: SessionOptions(duckOthers: true)))
        #expect(first == PolicyDecision(id: "first", ducking: DuckChanges(ducked: ["bed"])))
        let second = policy.activate(
            "second", session: AudioSession(category: .ambient, options: SessionOptions(duckOthers: true)))
        #expect(second == PolicyDecision(id: "second"), "the bed is already down; duckers stay up")
        #expect(policy.duckers == ["first", "second"])

        #expect(policy.deactivate("first") == DeactivationDecision(id: "first"))
        #expect(policy["bed"]?.ducked == true)
        #expect(
            policy.deactivate("second") == DeactivationDecision(id: "second", ducking: DuckChanges(unducked: ["bed"])))
        #expect(
            policy.deactivate("second") == DeactivationDecision(id: "second"), "a second deactivation changes nothing")

        // A stream that starts under a ducker starts ducked.
        _ = policy.activate(
            "ducker", session: AudioSession(category: .ambient, options: SessionOptions(duckOthers: true)))
        #expect(policy.activate("late", session: AudioSession(category: .ambient)).startsDucked)
    }

    @Test(arguments: [true, false])
    func notifyOthersOnDeactivation(_ notify: Bool) {
        var policy = SessionPolicy()
        _ = policy.activate("a", session: AudioSession())
        let b = policy.activate(
            "b",
            session: AudioSession(
                category: .playback,
                options: SessionOptions(notifyOthersOnDeactivation: notify)),
            preempting: "a")
        #expect(b.interrupted == [Interruption(id: "a", by: "b", reason: .preempted)])
        let end = policy.deactivate("b")
        #expect(end.ended == [InterruptionEnd(id: "a", by: "b", shouldResume: notify)])
        #expect(policy.awaitingResume == (notify ? [] : ["a"]))
        #expect(policy["a"]?.isPlaying == notify)
        if !notify {
            #expect(policy.resume("a") == DuckChanges())
            #expect(policy.awaitingResume.isEmpty)
            #expect(policy["a"]?.isPlaying == true)
        }
    }

    @Test func spokenAudioIsPausedAndResumes() {
        var policy = SessionPolicy()
        _ = policy.activate("podcast", session: AudioSession(category: .ambient, mode: .spokenAudio))
        _ = policy.activate("music", session: AudioSession(category: .ambient))
        _ = policy.activate("talk", session: AudioSession(category: .playback, mode: .spokenAudio))
        let navSession = AudioSession(
            category: .playback, options: SessionOptions(interruptSpokenAudioAndMixWithOthers: true), mode: .voicePrompt
        )
        #expect(navSession.lane == .mixed)
        let nav = policy.activate("nav", session: navSession)
        #expect(
            nav.interrupted == [
                Interruption(id: "podcast", by: "nav", reason: .spokenAudioInterrupted),
                Interruption(id: "talk", by: "nav", reason: .spokenAudioInterrupted)
            ])
        #expect(policy["music"]?.isPlaying == true)
        let end = policy.deactivate("nav")
        #expect(
            end.ended == [
                InterruptionEnd(id: "podcast", by: "nav", shouldResume: true),
                InterruptionEnd(id: "talk", by: "nav", shouldResume: true)
            ])
        #expect(policy.streams.allSatisfy { $0.isPlaying })
    }

    @Test func aStreamHeldTwiceEndsWithTheLastAndRemembersNoNotify() {
        var policy = SessionPolicy()
        _ = policy.activate("podcast", session: AudioSession(category: .ambient, mode: .spokenAudio))
        let quiet = SessionOptions(interruptSpokenAudioAndMixWithOthers: true, notifyOthersOnDeactivation: false)
        #expect(policy.activate("x", session: AudioSession(category: .ambient, options: quiet)).interrupted.count == 1)
        let y = policy.activate(
            "y", session: AudioSession(options: SessionOptions(interruptSpokenAudioAndMixWithOthers: true)))
        #expect(y.interrupted.isEmpty, "already paused: no second interruption-began")
        #expect(policy["podcast"]?.interruptedBy == ["x", "y"])

        #expect(policy.deactivate("x").ended.isEmpty, "y still holds it")
        #expect(policy.awaitingResume.isEmpty)
        #expect(policy.deactivate("y").ended == [InterruptionEnd(id: "podcast", by: "y", shouldResume: false)])
        #expect(policy.awaitingResume == ["podcast"])
    }

    @Test func anInterruptedDuckerStopsDuckingUntilItResumes() {
        var policy = SessionPolicy()
        _ = policy.activate("bed", session: AudioSession(category: .ambient))
        _ = policy.activate("low", session: AudioSession(options: SessionOptions(duckOthers: true)))
        #expect(policy["bed"]?.ducked == true)
        let high = policy.activate("high", session: AudioSession(category: .playback), preempting: "low")
        #expect(
            high
                == PolicyDecision(
                    id: "high",
                    interrupted: [Interruption(id: "low", by: "high", reason: .preempted)],
                    ducking: DuckChanges(unducked: ["bed"])))
        let end = policy.deactivate("high")
        #expect(
            end
                == DeactivationDecision(
                    id: "high", ended: [InterruptionEnd(id: "low", by: "high", shouldResume: true)],
                    ducking: DuckChanges(ducked: ["bed"])))
    }

    @Test func aNewcomerIsNotInterruptedByWhatIsAlreadyActive() {
        var policy = SessionPolicy()
        _ = policy.activate(
            "nav",
            session: AudioSession(
                category: .playback, options: SessionOptions(interruptSpokenAudioAndMixWithOthers: true)))
        let podcast = policy.activate("podcast", session: AudioSession(category: .ambient, mode: .spokenAudio))
        #expect(podcast.interrupted.isEmpty)
        #expect(policy["podcast"]?.isPlaying == true)
        #expect(policy["nav"]?.isPlaying == true)
    }

    /// A ducker paused for a reason outside the policy (the queue paused, its device busy or
    /// gone) lets the others up while it is silent, and ducks them again when it plays.
    @Test func aSuspendedDuckerDucksNoOneUntilItPlaysAgain() {
        var policy = SessionPolicy()
        _ = policy.activate("bed", session: AudioSession(category: .ambient))
        let ducker = AudioSession(category: .playback, options: SessionOptions(duckOthers: true))
        #expect(policy.activate("voice", session: ducker).ducking == DuckChanges(ducked: ["bed"]))
        #expect(policy.setSuspended("voice", true) == DuckChanges(unducked: ["bed"]))
        #expect(policy.setSuspended("voice", true) == DuckChanges(), "twice changes nothing")
        #expect(policy["voice"]?.isPlaying == false && policy.duckers.isEmpty)
        #expect(policy.setSuspended("voice", false) == DuckChanges(ducked: ["bed"]))
        #expect(policy.setSuspended("nobody", true) == DuckChanges())
    }
}
