import Testing

@testable import AnnounceModel

/// What other applications play (OtherAudioScene, DESIGN §3): other audio playing, calls, and
/// what `--if-other-audio` does with them (IfOtherAudio).
@Suite struct OtherAudioSceneTests {
    static let own: Int64 = 4242
    static let roles = OtherAudioScene.defaultInterruptingRoles

    func scene(_ streams: [OtherStream], roles: [String] = roles) -> OtherAudioScene {
        OtherAudioScene(streams: streams, ownProcessID: Self.own, interruptingRoles: roles)
    }

    @Test func announcesOwnAndCorkedStreamsNeverCount() {
        let seen = scene([
            OtherStream(
                index: 1, volume: [65536], processID: Self.own, role: "phone", application: "ALSA plug-in [announce]"),
            OtherStream(index: 2, volume: [65536], processID: 7, role: "announce", application: "another announce"),
            OtherStream(index: 3, volume: [65536], processID: 8, role: "phone", application: "linphone", corked: true),
            OtherStream(index: 4, volume: [65536], processID: 9, application: "mpv", corked: true)
        ])
        #expect(seen == OtherAudioScene())
        #expect(!seen.isOtherAudioPlaying && seen.call == nil)
    }

    @Test func anyOtherUncorkedStreamPlaysAndACallIsAnInterruptingRole() {
        let seen = scene([
            OtherStream(index: 4, volume: [65536], processID: 9, application: "mpv"),
            OtherStream(index: 5, volume: [65536], processID: 10, role: "communication", application: "firefox"),
            OtherStream(index: 6, volume: [65536], processID: 11, role: "phone", application: "linphone"),
            OtherStream(index: 7, volume: [65536], role: "music")
        ])
        #expect(
            seen.playing == [
                "mpv (pid 9)", "firefox (pid 10, role communication)", "linphone (pid 11, role phone)",
                "stream #7 (role music)"
            ])
        #expect(seen.isOtherAudioPlaying)
        #expect(seen.call == "firefox (pid 10, role communication)", "the first in the server's order names it")
    }

    @Test func theConfiguredRolesDecideWhatIsACall() {
        let streams = [
            OtherStream(index: 1, volume: [65536], processID: 9, role: "phone", application: "linphone"),
            OtherStream(index: 2, volume: [65536], processID: 10, role: "alarm", application: "clock")
        ]
        #expect(scene(streams, roles: ["alarm"]).call == "clock (pid 10, role alarm)")
        #expect(scene(streams, roles: []).call == nil)
        #expect(scene(streams, roles: []).isOtherAudioPlaying)
        // A stream with no role is never a call, whatever the list.
        #expect(scene([OtherStream(index: 3, volume: [1], processID: 3)], roles: [""]).call == nil)
    }

    @Test func callChanges() {
        let call = OtherAudioScene(playing: ["a"], call: "a")
        let other = OtherAudioScene(playing: ["b"], call: "b")
        let none = OtherAudioScene(playing: ["m"])
        #expect(call.callChange(from: nil) == .began(by: "a"))
        #expect(call.callChange(from: none) == .began(by: "a"))
        #expect(none.callChange(from: call) == .ended)
        #expect(OtherAudioScene().callChange(from: call) == .ended)
        #expect(other.callChange(from: call) == nil, "one call's stream taking over from another is no news")
        #expect(none.callChange(from: nil) == nil)
    }

    /// A seeded random walk of a server's streams appearing, corking, uncorking and going: the
    /// changes alternate began/ended, a call is on exactly while an uncorked stream of an
    /// interrupting role (not announce's) plays, and other audio plays exactly while any such other stream does.
    @Test(arguments: 0..<40 as Range<UInt64>) func randomWalkOfStreams(seed: UInt64) {
        var generator = SplitMix64(state: seed)
        var streams: [OtherStream] = []
        var next: UInt32 = 1
        var last: OtherAudioScene?
        var callOn = false
        let roles = ["", "music", "phone", "communication", "announce", "event"]
        for _ in 0..<300 {
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                let own = Int.random(in: 0..<5, using: &generator) == 0
                streams.append(
                    OtherStream(
                        index: next, volume: [65536], processID: own ? Self.own : Int64(next + 100),
                        role: roles.randomElement(using: &generator)!, application: "app\(next)",
                        corked: Bool.random(using: &generator)))
                next += 1
            case 1 where !streams.isEmpty:
                streams.remove(at: Int.random(in: 0..<streams.count, using: &generator))
            case 2 where !streams.isEmpty:
                streams[Int.random(in: 0..<streams.count, using: &generator)].corked.toggle()
            default:
                break
            }
            let now = scene(streams)
            switch now.callChange(from: last) {
            case .began?:
                #expect(!callOn, "began twice")
                callOn = true
            case .ended?:
                #expect(callOn, "ended without a call")
                callOn = false
            case nil:
                break
            }
            let audible = streams.filter { !$0.corked && $0.processID != Self.own && $0.role != "announce" }
            #expect(callOn == audible.contains { ["phone", "communication"].contains($0.role) })
            #expect(callOn == (now.call != nil))
            #expect(now.isOtherAudioPlaying == !audible.isEmpty)
            last = now
        }
    }

    @Test func ifOtherAudioDecidesOnlyWhenOtherAudioPlays() {
        for choice in IfOtherAudio.allCases {
            #expect(choice.start(otherAudioPlaying: false) == .play)
            #expect(choice.start(otherAudioPlaying: nil) == .play, "no sound server: nothing plays there")
        }
        #expect(IfOtherAudio.play.start(otherAudioPlaying: true) == .play)
        #expect(IfOtherAudio.duck.start(otherAudioPlaying: true) == .playDucking)
        #expect(IfOtherAudio.wait.start(otherAudioPlaying: true) == .wait)
        #expect(IfOtherAudio.skip.start(otherAudioPlaying: true) == .silence(reason: "other audio playing"))
    }

    @Test func theConfigFileSetsTheInterruptingRoles() {
        #expect(UserConfiguration.parse("", name: "c").configuration.interruptingRoles == ["phone", "communication"])
        let set = UserConfiguration.parse("[session]\ninterrupting-roles = Phone, alarm\n", name: "c")
        #expect(set.configuration.interruptingRoles == ["phone", "alarm"] && set.warnings.isEmpty)
        #expect(
            UserConfiguration.parse("[session]\ninterrupting-roles = none\n", name: "c").configuration.interruptingRoles
                == [])
        let bad = UserConfiguration.parse("[session]\ninterrupting-roles = phone,,x\nringtone = yes\n", name: "c")
        #expect(bad.configuration.interruptingRoles == ["phone", "communication"])
        #expect(
            bad.warnings == [
                "c:2: interrupting-roles must be media roles separated by commas, like phone, communication, or none; not 'phone,,x'",
                "c:3: unknown key 'ringtone' in [session] (known: interrupting-roles)"
            ])
    }

    @Test func waitIsRefusedForAMixableSession() {
        var request = ItemRequest(clip: Clip(path: "/tmp/a.wav"), ifOtherAudio: .wait)
        #expect(request.problem == nil)
        request.session = AudioSession(category: .ambient)
        #expect(request.problem == .waitingMixable(AudioSession(category: .ambient)))
        request.ifOtherAudio = .skip
        #expect(request.problem == nil)
    }
}
