/// What `announce alert` accepts (DESIGN §3, System sounds), like AudioServicesPlaySystemSound:
/// linear PCM in WAV, CAF or AIFF, at most 30 s. Pure: it judges what a decoder found.
public enum SystemSound {
    /// Longest alert, in seconds.
    public static let maxSeconds = 30.0
    /// Most decoded PCM (float) one alert may take: the daemon's whole alert cache.
    public static let maxDecodedBytes = 64 << 20

    /// Containers an alert may come in.
    static let containers: Set<Container> = [.wav, .wavExtensible, .rifx, .rf64, .caf, .aiff, .aifc]

    /// Why `info` cannot be an alert (65, naming `path`), or nil when it can.
    /// "a.flac: alerts play PCM WAV, CAF or AIFF; this is FLAC (use announce play)",
    /// "long.wav: 31.2 s is longer than an alert's 30 s (use announce play)".
    public static func refusal(of info: AudioFileInfo, path: String) -> AnnounceError? {
        if !isLinearPCM(info) {
            return .undecodable(
                path: path, reason: "alerts play PCM WAV, CAF or AIFF; this is \(kind(of: info)) (use announce play)")
        }
        guard let seconds = info.durationSeconds else {
            return .undecodable(
                path: path, reason: "its length is unknown; alerts are at most \(Int(maxSeconds)) s (use announce play)"
            )
        }
        if seconds > maxSeconds {
            return .undecodable(
                path: path,
                reason: "\(secondsText(seconds)) s is longer than an alert's \(Int(maxSeconds)) s (use announce play)")
        }
        let channels = Double(info.channels)
        let rate = Double(info.sampleRate)
        if seconds * rate * channels * 4 > Double(maxDecodedBytes) {
            return .undecodable(
                path: path,
                reason: "\(info.channels) channels at \(info.sampleRate) Hz for \(secondsText(seconds)) s "
                    + "is more than an alert's \(maxDecodedBytes >> 20) MiB decoded (use announce play)")
        }
        return nil
    }

    /// Integer or float PCM (not ADPCM, mu-law, A-law, ALAC...) in one of `containers`.
    static func isLinearPCM(_ info: AudioFileInfo) -> Bool {
        containers.contains(info.container) && info.codec.isLinearPCM
    }

    /// "FLAC", "MP3", "Ogg Vorbis", "IMA ADPCM in WAV".
    static func kind(of info: AudioFileInfo) -> String {
        switch info.container {
        case .ogg: "Ogg \(info.codec.name)"
        case let container where containers.contains(container): "\(info.codec.name) in \(container.name)"
        default: info.container.name
        }
    }

    /// One decimal, more when one decimal would read as the limit itself (30.04 → "30.04").
    static func secondsText(_ seconds: Double) -> String {
        for decimals in 1...3 {
            let scale = [10.0, 100.0, 1000.0][decimals - 1]
            let rounded = (seconds * scale).rounded() / scale
            if rounded > maxSeconds || decimals == 3 {
                let whole = Int(rounded)
                let fraction = Int(((rounded - Double(whole)) * scale).rounded())
                let digits = String(fraction)
                return "\(whole)." + String(repeating: "0", count: max(0, decimals - digits.count)) + digits
            }
        }
        return "\(seconds)"
    }
}
