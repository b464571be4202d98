import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

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
            // It takes more forms than it lists (variants: en-us+f3): asked with nothing to say.
            guard let voice = speech.voice ?? speech.language else { return }
            let process = try ChildProcess(executable: program, arguments: ["-q", "-v", voice], input: [])
            var byte: UInt8 = 0
            _ = try? process.read(into: &byte, count: 1, stallSeconds: 10)
            if process.wait() != .exited(0) {
                throw .unavailable("espeak-ng has no voice '\(voice)' (see `announce voices --engine espeak-ng`)")
            }
        case .piper:
            _ = try PiperVoices.resolve(speech, piper: program)
        case .flite:
            guard let voice = speech.voice else { return }
            if voice.contains("://") { throw .usage("--voice \(voice): flite voices are files here, not URLs") }
            if voice.contains("/") {
                // A .flitevox file: flite speaks with its default voice, without a word, when it cannot load one.
                var info = stat()
                guard stat(voice, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(voice, R_OK) == 0 else {
                    throw .cannotOpen(path: voice, reason: "no readable flite voice file there")
                }
                return
            }
            let voices = try list(.flite, program: program)
            if !voices.contains(where: { $0.name == voice }) {
                throw .unavailable(
                    "flite has no voice '\(voice)' (its voices: \(voices.map(\.name).joined(separator: ", ")))")
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
                throw .programFailed(
                    program: program, reason: "\(arguments.joined(separator: " ")): \(error.description)")
            }
            if got == 0 { break }
            bytes += chunk[0..<got]
        }
        guard process.wait() == .exited(0) else {
            throw .programFailed(
                program: program,
                reason: "\(arguments.joined(separator: " ")) failed\(process.errorLine.map { ": \($0)" } ?? "")")
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
