import Testing

@testable import AnnounceDaemon
@testable import AnnounceModel
@testable import AnnounceSources
@testable import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Sentences, the spoken-text source over the real espeak-ng, and the `[speech]` config section.
@Suite struct SentencesTests {
    @Test(arguments: [
        ("Backup finished. Next one at ten!", ["Backup finished.", "Next one at ten!"]),
        ("It costs 3.5 euros. OK?", ["It costs 3.5 euros.", "OK?"]),
        ("He said \"stop.\" Then he left.", ["He said \"stop.\"", "Then he left."]),
        ("Wait... what?", ["Wait...", "what?"]),
        ("one line\nwrapped here.\n\nNew paragraph", ["one line wrapped here.", "New paragraph"]),
        ("  \n ", []),
        ("no end mark", ["no end mark"])
    ])
    func splitsAtSentenceEnds(text: String, expected: [String]) {
        #expect(Sentences.split(text) == expected)
    }

    /// Text with no space or comma the cut could use, a no-break space where it would cut, and
    /// ideographic text: every piece is non-empty and at most the limit, and nothing is lost.
    @Test(arguments: [
        "word\u{a0}" + String(repeating: "a", count: 700),
        String(repeating: "b", count: 1900),
        "\u{3000}" + String(repeating: "漢", count: 1300) + "\u{3000}x"
    ])
    func alwaysMakesProgress(text: String) {
        let pieces = Sentences.split(text)
        #expect(!pieces.isEmpty && pieces.allSatisfy { !$0.isEmpty && $0.count <= Sentences.maxCharacters })
        #expect(pieces.joined().filter { !$0.isWhitespace } == text.filter { !$0.isWhitespace })
    }

    @Test func fullWidthMarksEndSentencesWithoutASpace() {
        #expect(Sentences.split("バックアップが終わりました。次は十時です！本当？「はい。」") == ["バックアップが終わりました。", "次は十時です！", "本当？", "「はい。」"])
    }

    @Test func cutsAnOverlongSentenceBetweenWords() {
        let words = (1...400).map { "word\($0)" }
        let text = words.joined(separator: " ") + ", and " + words.joined(separator: " ")
        let pieces = Sentences.split(text)
        #expect(pieces.count > 1 && pieces.allSatisfy { $0.count <= Sentences.maxCharacters })
        #expect(
            pieces.joined(separator: " ").split(separator: " ") == text.split(separator: " "), "no word is cut or lost")
    }

    @Test func aLabelShowsNoControlCharacters() {
        #expect(Speech(text: "\u{1b}[31mred\u{7}\talert\n").label == "say: \"[31mred alert\"")
    }

    @Test func configSpeechSection() {
        let (configuration, warnings) = UserConfiguration.parse(
            """
            device = null
            [speech]
            engine = flite
            voice = slt
            cache-size = 8M
            colour = red
            [zones]
            broker = x
            """, name: "c")
        #expect(
            configuration.device == "null" && configuration.speechEngine == .flite && configuration.speechVoice == "slt"
        )
        #expect(configuration.speechCacheBytes == 8 << 20)
        #expect(
            warnings == [
                "c:6: unknown key 'colour' in [speech] (known: engine, voice, cache-size)",
                "c:7: unknown section [zones] (known: [chime], [speech], [download], [session], [mqtt], [system])"
            ])
    }
}

@Suite("SpeechSource over espeak-ng", .enabled(if: ChildProcess.find("espeak-ng") != nil, "espeak-ng is not installed"))
struct SpeechSourceTests {
    let speech = Speech(text: "First sentence here. The second one is longer than the first! And a third?")

    private func readAll(_ source: SpeechSource) throws -> [Int16] {
        var samples: [Int16] = []
        var buffer = [Int16](repeating: 0, count: 1000 * source.format.channels)
        while true {
            let got = try buffer.withUnsafeMutableBytes { raw in
                try source.read(into: raw.baseAddress!, frames: 1000, as: .int16)
            }
            if got == 0 { return samples }
            samples += buffer[0..<(got * source.format.channels)]
        }
    }

    @Test func resumesAtTheStartOfTheSentenceHeardAndCountsWholeSentences() throws {
        let source = try SpeechSource(speech: speech, cache: nil)
        #expect(source.format.sampleRate == 22050 && source.format.channels == 1 && source.resumption == .sentenceStart)
        let all = try readAll(source)
        let total = try #require(source.duration.exactFrames, "known once every sentence has been rendered")
        #expect(Int64(all.count) == total)
        // Sentence starts: where resumeFrame leads, from anywhere in each sentence.
        let secondStart = source.resumeFrame(forHeard: total / 2)
        #expect(secondStart > 0 && secondStart < total / 2)
        #expect(source.resumeFrame(forHeard: secondStart) == secondStart)
        #expect(source.resumeFrame(forHeard: secondStart - 1) == 0)
        #expect(source.heardFraction(forHeard: secondStart - 1) == 0)
        #expect(source.heardFraction(forHeard: secondStart + 10) == 1.0 / 3)
        #expect(source.heardFraction(forHeard: total) == 1)
        // Seeking to it renders again and gives exactly the same samples.
        try source.seek(toFrame: secondStart)
        #expect(try readAll(source) == Array(all[Int(secondStart)...]))
        // The engine driver's rule: resume there, replaying what was heard of that sentence.
        let fresh = try SpeechSource(speech: speech, cache: nil)
        let point = try #require(EngineDriver.resumePoint(of: fresh, heard: total / 2, startFrame: 0, loops: 0))
        #expect(point.offset == secondStart && point.replayed == total / 2 - secondStart)
    }

    @Test func cachedRendersPlayTheSameSamplesAndKnowTheirLength() throws {
        let directory = "/tmp/announce-speech-cache-\(getpid())"
        defer { SpeechCache(directory: directory).clear() }
        let cache = SpeechCache(directory: directory)
        let rendered = try readAll(try SpeechSource(speech: speech, cache: cache))
        let again = try SpeechSource(speech: speech, cache: cache)
        #expect(again.duration.exactFrames == Int64(rendered.count), "every sentence's length comes from the cache")
        #expect(try readAll(again) == rendered)
        // A start mid-sentence (--start) lands on the frame.
        try again.seek(toFrame: 12345)
        #expect(try readAll(again) == Array(rendered[12345...]))
    }

    @Test func theCacheKeepsToItsLimitDroppingTheLeastRecentlyUsed() throws {
        let directory = "/tmp/announce-speech-evict-\(getpid())"
        defer { SpeechCache(directory: directory).clear() }
        // Each of these sentences renders to 30–60 KB: a 100 KB cache holds two or three.
        let cache = SpeechCache(directory: directory, limitBytes: 100_000)
        for number in 1...6 {
            _ = try readAll(try SpeechSource(speech: Speech(text: "Sentence number \(number) is here."), cache: cache))
        }
        let entries = directoryEntries(directory)
        let total = entries.reduce(Int64(0)) { total, name in
            var info = stat()
            return stat(directory + "/" + name, &info) == 0 ? total + Int64(info.st_size) : total
        }
        #expect(
            total <= 100_000 && entries.count >= 1 && entries.allSatisfy { $0.hasSuffix(".wav") },
            "\(entries): \(total) bytes")
        let last = (try? EngineSetup.find(for: Speech(text: "x"))).flatMap { $0 }.map {
            SpeechCache.key(
                speech: Speech(text: "Sentence number 6 is here."), engineBuild: $0.build,
                sentence: "Sentence number 6 is here.")
        }
        #expect(last.flatMap { cache.lookup($0) } != nil, "the newest render is kept")
    }
}

/// The engine started ahead: taken by the same command only, ended when unused for a minute.
@Suite struct EngineStandbyTests {
    final class Clock: @unchecked Sendable {
        var now = 1000.0
    }

    @Test func takenOnlyByTheSameCommandAndEndedWhenUnused() throws {
        let clock = Clock()
        let standby = EngineStandby(clock: { clock.now })
        let command = SpeechCommand(arguments: [], output: .raw16(sampleRate: 8000, channels: 1))
        #expect(standby.secondsLeft(now: clock.now) == nil)
        standby.prepare(executable: "/bin/cat", command: command)
        #expect(standby.secondsLeft(now: clock.now) == EngineStandby.idleSeconds)
        #expect(
            standby.take(executable: "/bin/cat", command: SpeechCommand(arguments: ["-u"], output: command.output))
                == nil,
            "another command does not take it")
        // The one that waits is still there for the right command, and it echoes what it is given.
        let process = try #require(standby.take(executable: "/bin/cat", command: command))
        try process.send(Array("ab".utf8))
        var bytes = [UInt8](repeating: 0, count: 2)
        #expect(
            try bytes.withUnsafeMutableBytes { try process.read(into: $0.baseAddress!, count: 2, stallSeconds: 5) } == 2
        )
        #expect(bytes == Array("ab".utf8) && process.wait() == .exited(0))
        // A new one, unused for a minute, is ended.
        standby.prepare(executable: "/bin/cat", command: command)
        clock.now += EngineStandby.idleSeconds - 1
        standby.expire(now: clock.now)
        #expect(standby.secondsLeft(now: clock.now) == 1)
        clock.now += 1
        standby.expire(now: clock.now)
        #expect(
            standby.secondsLeft(now: clock.now) == nil && standby.take(executable: "/bin/cat", command: command) == nil)
    }
}
