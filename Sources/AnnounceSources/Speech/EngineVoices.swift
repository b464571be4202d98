#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem

/// The installed engines' voices (`announce voices`), and the check that a `--voice` is one
/// of them for the engines that would otherwise not say so (flite falls back to its default
/// voice without a word; piper needs the model found before it starts).
public enum EngineVoices {
    /// The voices of `engine`, installed at `program`.
    public static func list(_ engine: SpeechEngine, program: String) throws(AnnounceError) -> [VoiceEntry] {
        switch engine {
        case .espeakNG: VoiceList.espeakNG(try output(of: program, ["--voices"]))
        case .flite: VoiceList.flite(try output(of: program, ["-lv"]))
        case .piper: PiperVoices.installed(piper: program).map(VoiceList.piper)
        }
    }

    /// Throws 69 when `speech` names a voice its engine (at `program`) does not have.
    /// espeak-ng reports an unknown voice itself, and takes more forms than it lists (variants).
    public static func check(_ speech: Speech, program: String) throws(AnnounceError) {
        switch speech.engine {
        case .espeakNG:
            return
        case .piper:
            _ = try PiperVoices.resolve(speech, piper: program)
        case .flite:
            // A path is a .flitevox file, which flite loads (and reports when it cannot).
            guard let voice = speech.voice, !voice.contains("/") else { return }
            let voices = try list(.flite, program: program)
            if !voices.contains(where: { $0.name == voice }) {
                throw .unavailable("flite has no voice '\(voice)' (its voices: \(voices.map(\.name).joined(separator: ", ")))")
            }
        }
    }

    /// What `program arguments` prints on stdout; 70 when it fails.
    static func output(of program: String, _ arguments: [String]) throws(AnnounceError) -> String {
        let process = try ChildProcess(executable: program, arguments: arguments, input: [])
        var bytes: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 16384, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let got: Int
            do {
                got = try process.read(into: chunk.baseAddress!, count: chunk.count, stallSeconds: 10)
            } catch {
                process.terminate()
                throw .programFailed(program: program, reason: "\(arguments.joined(separator: " ")): \(error.description)")
            }
            if got == 0 { break }
            bytes += chunk[0..<got]
        }
        guard process.wait() == .exited(0) else {
            throw .programFailed(program: program, reason: "\(arguments.joined(separator: " ")) failed\(process.errorLine.map { ": \($0)" } ?? "")")
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
