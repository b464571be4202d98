import Foundation
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

/// Values from the wire or the command line that once trapped the daemon or the
/// client (a trap in the daemon, replayed from the spool, would crash every restart),
/// refused by the rules client and daemon share (`Request.problem`).
@Suite struct ValidationTests {
    private func request(_ change: (inout ItemRequest) -> Void) -> ItemRequest {
        var request = ItemRequest(clip: Clip(path: "/tmp/a.wav"))
        change(&request)
        return request
    }

    /// Why the shared rules (client and daemon) refuse the changed request.
    private func problem(_ change: (inout ItemRequest) -> Void) -> String? {
        request(change).problem?.description
    }

    @Test func aPlainRequestPasses() {
        #expect(problem { _ in } == nil)
    }

    /// `clip.media` never becomes a path outside the daemon's media directory: only hex names.
    @Test func mediaIsAHexNameAndItsPathALabel() {
        let name = String(repeating: "a1", count: 16)
        #expect(
            problem {
                $0.clip.media = name
                $0.clip.path = Clip.stdinLabel
            } == nil)
        for bad in ["", "../spool/x", ".a1.tmp", "A1", "a/b", String(repeating: "a", count: 65)] {
            #expect(
                problem { $0.clip.media = bad } == "media must be 1 to 64 lowercase hex digits, without speech",
                "\(bad)")
        }
        #expect(
            problem {
                $0.clip.media = name
                $0.clip.speech = Speech(text: "hi")
            }?.hasPrefix("media must be") == true)
        #expect(
            problem {
                $0.clip.media = name
                $0.clip.path = "stdin\u{0}"
            }?.contains("NUL") == true)
        #expect(
            problem { $0.clip.path = Clip.stdinLabel }?.hasPrefix("path must be absolute") == true,
            "a label needs media")
    }

    @Test func refusesAbsurdLoopsTimesAndPaths() {
        // Each names the field it refuses ("at" alone would match almost any message).
        #expect(problem { $0.clip.loops = .max }?.hasPrefix("loops must be") == true)
        #expect(problem { $0.clip.loops = Limits.maxLoops } == nil)
        #expect(problem { $0.clip.start = 1e300 }?.hasPrefix("start must be") == true)
        #expect(problem { $0.delay = 1e300 }?.hasPrefix("delay must be") == true)
        #expect(problem { $0.expire = 1e300 }?.hasPrefix("expire must be") == true)
        #expect(problem { $0.at = 1e300 }?.hasPrefix("at must be") == true)
        #expect(problem { $0.clip.path = "/tmp/a\u{0}.wav" }?.contains("NUL") == true)
    }

    @Test func rateAndPitchAreWithinTheirLimits() {
        for rate in [0.25, 1, 2, 8] { #expect(problem { $0.clip.rate = rate } == nil, "\(rate)") }
        for rate: Double in [0, -1, 0.2, 8.5, .nan, .infinity] {
            #expect(problem { $0.clip.rate = rate }?.hasPrefix("rate must be 0.25 to 8.0") == true, "\(rate)")
        }
        for pitch in [-12.0, 0, 7.5, 12] { #expect(problem { $0.clip.pitch = pitch } == nil, "\(pitch)") }
        for pitch: Double in [-12.5, 13, .nan, -.infinity] {
            #expect(
                problem { $0.clip.pitch = pitch }?.hasPrefix("pitch must be -12 to 12 semitones") == true, "\(pitch)")
        }
    }

    /// Items spooled before the fields existed decode as plain clips; the new ones go through.
    @Test func reshapingFieldsAreOptionalOnTheWireAndInTheSpool() throws {
        let old = try JSONDecoder().decode(Clip.self, from: Data(#"{"path":"/a.wav","gain":1,"pan":0,"loops":0}"#.utf8))
        #expect(old.rate == nil && old.pitch == nil && old.skipSilence == nil)
        #expect(Reshaping(old, silence: .default).isIdentity)
        let clip = Clip(path: "/a.wav", rate: 2, pitch: -3, skipSilence: true)
        let decoded = try JSONDecoder().decode(Clip.self, from: JSONEncoder().encode(clip))
        #expect(decoded == clip)
        #expect(Reshaping(decoded, silence: .default) == Reshaping(rate: 2, semitones: -3, silence: .default))
    }

    @Test func duckLevelIsFiniteAndAtMostZero() {
        #expect(problem { $0.duckLevel = -12 } == nil)
        #expect(problem { $0.duckLevel = 0 } == nil)
        #expect(problem { $0.duckLevel = -60 } == nil)
        for level: Double in [3, -61, .nan, .infinity, -.infinity] {
            #expect(
                problem { $0.duckLevel = level }?.hasPrefix("duckLevel must be -60 to 0 dB") == true,
                "\(level)")
        }
    }

    @Test func devicesForMultiRoute() {
        let multiRoute = AudioSession(category: .multiRoute)
        #expect(
            problem {
                $0.session = multiRoute
                $0.clip.device = "hw:0"
                $0.clip.extraDevices = ["hw:1", "hw:2"]
            } == nil)
        // Without a device of its own, the daemon's device comes first.
        #expect(
            problem {
                $0.session = multiRoute
                $0.clip.extraDevices = ["hw:1"]
            } == nil)
        #expect(problem { $0.clip.extraDevices = [] } == nil)
        // Extra devices in any other category, the default one included.
        for session in [nil, AudioSession(category: .playback), AudioSession(category: .ambient)] {
            #expect(
                problem {
                    $0.session = session
                    $0.clip.device = "hw:0"
                    $0.clip.extraDevices = ["hw:1"]
                }?.hasPrefix("extraDevices need category multi-route") == true)
        }
        // Eight in all, the daemon's device counted.
        let eight = (1...7).map { DeviceName("hw:\($0)") }
        #expect(
            problem {
                $0.session = multiRoute
                $0.clip.device = "hw:0"
                $0.clip.extraDevices = eight
            } == nil)
        #expect(
            problem {
                $0.session = multiRoute
                $0.clip.extraDevices = eight
            } == nil)
        #expect(
            problem {
                $0.session = multiRoute
                $0.clip.extraDevices = eight + ["hw:8"]
            }?
            .hasPrefix("at most 8 devices") == true)
        // Names: none empty, none over 1024 bytes, none twice.
        let long = String(repeating: "x", count: 1025)
        for extra: [DeviceName] in [[""], ["\(long)"], ["hw:1", ""]] {
            #expect(
                problem {
                    $0.session = multiRoute
                    $0.clip.extraDevices = extra
                }
                    == "device name is empty or too long")
        }
        #expect(problem { $0.clip.device = "" } == "device name is empty or too long")
        #expect(problem { $0.clip.device = DeviceName(long) } == "device name is empty or too long")
        #expect(problem { $0.clip.device = DeviceName(String(repeating: "x", count: 1024)) } == nil)
        #expect(
            problem {
                $0.session = multiRoute
                $0.clip.device = "hw:0"
                $0.clip.extraDevices = ["hw:1", "hw:0"]
            } == "device hw:0 is given twice")
    }

    @Test func theDeviceRuleIsOneForClientAndDaemon() {
        // What play's -d options give (device first, the rest extra) and what the daemon reads.
        #expect(
            DeviceName.problem(device: "hw:0", extra: ["hw:1"], category: .soloAmbient)
                == .severalNeedMultiRoute(.soloAmbient))
        #expect(
            DeviceName.problem(device: nil, extra: (1...8).map { "hw:\($0)" }, category: .multiRoute) == .tooMany(9))
        #expect(DeviceName.problem(device: "hw:0", extra: ["hw:0"], category: .multiRoute) == .givenTwice("hw:0"))
        #expect(DeviceName.problem(device: "", extra: [], category: .multiRoute) == .emptyName)
        #expect(
            DeviceName.problem(device: "file:out.wav", extra: [], category: .soloAmbient)
                == .relativeFile("file:out.wav"))
        #expect(
            DeviceName.problem(device: "file:out.wav", extra: [], category: .soloAmbient, relativeFileAllowed: true)
                == nil)
        #expect(DeviceProblem.tooMany(9).description == "at most 8 devices, not 9")
    }

    @Test func existingChecksStillApply() {
        #expect(problem { $0.clip.path = "a.wav" }?.hasPrefix("path must be absolute") == true)
        #expect(problem { $0.clip.path = "/" + String(repeating: "a", count: 4096) } == "path is too long")
        #expect(problem { $0.clip.gain = 17 }?.hasPrefix("gain must be") == true)
        #expect(problem { $0.clip.gain = .nan }?.hasPrefix("gain must be") == true)
        #expect(problem { $0.clip.pan = 2 }?.hasPrefix("pan must be") == true)
        #expect(problem { $0.dropAfter = 1.5 }?.hasPrefix("dropAfter must be") == true)
        #expect(problem { $0.tag = "" } == "tag is empty or too long")
    }

    @Test func problemsNameTheFieldAndTheValue() {
        // Typed for the CLI, which says them in its options' words; the daemon's words are fixed.
        #expect(request { $0.clip.pan = 2 }.problem == .pan(2))
        #expect(request { $0.clip.loops = -2 }.problem == .loops(-2))
        #expect(request { $0.dropAfter = 1.5 }.problem == .dropAfter(1.5))
        #expect(request { $0.delay = -1 }.problem == .time(.delay, -1))
        #expect(ItemProblem.time(.at, 1e300).description == "at must be 0 to 100000000000.0, not 1e+300")
        let ambient = AudioSession(category: .ambient)
        #expect(
            request {
                $0.session = ambient
                $0.delay = 5
            }.problem == .timedMixable(ambient))
        #expect(
            ItemProblem.timedMixable(ambient).description
                == "a mixable session (ambient) starts at once; at and delay need a queued one")
        #expect(ItemRequest.timingProblem(AudioSession(), timed: true) == nil)
        #expect(ItemRequest.panProblem(-1) == nil && ItemRequest.panProblem(1.5) == .pan(1.5))
        #expect(ItemRequest.loopsProblem(Limits.maxLoops) == nil && ItemRequest.loopsProblem(-1) == nil)
    }

    @Test func theHighestGainInDecibelsIsAGainTheDaemonTakes() {
        // --gain is in dB, the wire's gain linear: the dB limit is the whole dB below the linear one.
        let top = Double(Limits.gain.upperBound)
        #expect(exp(Limits.maxGainDecibels / 20 * log(10.0)) <= top)
        #expect(exp((Limits.maxGainDecibels + 1) / 20 * log(10.0)) > top)
    }

    @Test func alerts() {
        #expect(AlertRequest(path: "/s/ding.wav").problem == nil)
        #expect(AlertRequest(path: "/s/ding.wav", gain: 16, ignoreQuiet: true, device: "hw:0").problem == nil)
        #expect(AlertRequest(path: "ding.wav").problem?.description.hasPrefix("path must be absolute") == true)
        #expect(AlertRequest(path: "/s/a\u{0}.wav").problem?.description.contains("NUL") == true)
        #expect(AlertRequest(path: "/" + String(repeating: "a", count: 4096)).problem == .pathTooLong)
        for gain: Float in [-0.1, 16.5, .nan, .infinity] {
            #expect(
                AlertRequest(path: "/a.wav", gain: gain).problem?.description.hasPrefix("gain must be 0 to 16") == true,
                "\(gain)")
        }
        #expect(AlertRequest(path: "/a.wav", device: "").problem?.description == "device name is empty or too long")
    }

    @Test func durationsStopAtTheLongestAndFramesSaturate() {
        #expect(TimeSpan(parsing: "1e300s") == nil)
        #expect(TimeSpan(parsing: "1000000000s")?.seconds == 1e9)
        #expect(TimeSpan(seconds: 1e300).frames(atRate: 48_000) == .max)
        #expect(TimeSpan(seconds: .nan).frames(atRate: 48_000) == 0)
    }

    @Test func programLengthDoesNotOverflow() {
        #expect(PlaybackOptions.programFrames(fileFrames: .max / 2, startFrame: 0, loops: 3) == nil)
        #expect(PlaybackOptions.programFrames(fileFrames: 48_000, startFrame: 12_000, loops: 2) == 132_000)
        #expect(PlaybackOptions.programFrames(fileFrames: 48_000, startFrame: 0, loops: -1) == nil)
        #expect(PlaybackOptions.programFrames(fileFrames: nil, startFrame: 0, loops: 0) == nil)
    }

    @Test func aStartAtOrPastTheEndIsAUsageError() {
        let info = AudioFileInfo(
            container: .wav, codec: .pcm(bits: 16), sampleRate: 48_000, channels: 1, frames: 48_000,
            exactSampleFormat: .int16)
        func problem(_ start: Double) -> AnnounceError? {
            PlaybackOptions(start: TimeSpan(seconds: start)).startProblem(in: info, path: "a.wav")
        }
        #expect(
            problem(0.5) == nil && problem(0) == nil && PlaybackOptions().startProblem(in: info, path: "a.wav") == nil)
        #expect(problem(1) == .usage("a.wav: --start 0:01.0 is at or past the end (0:01.0)"))
        #expect(problem(2)?.exitCode == 64)
        var unknownLength = info
        unknownLength.frames = nil
        #expect(PlaybackOptions(start: TimeSpan(seconds: 9)).startProblem(in: unknownLength, path: "a.wav") == nil)
    }
}
