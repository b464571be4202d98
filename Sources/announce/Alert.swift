import AnnounceClient
import AnnounceModel
import AnnounceOutput
import AnnounceSources
import AnnounceSystem
import ArgumentParser

struct Alert: ParsableCommand {
    static let configuration = CommandConfiguration.subcommand(
        "alert",
        abstract: "Play a short system sound at once, mixed over everything.",
        discussion: """
            Like AudioServicesPlaySystemSound: the file plays immediately, mixed over whatever \
            plays; it is not queued and never preempted, and alerts given while another plays \
            overlap. Alerts are PCM WAV, CAF or AIFF files of at most \(Int(SystemSound.maxSeconds)) s \
            (recognised by content, not extension); anything else is refused before the daemon \
            is asked (use announce play). The daemon keeps decoded alerts, so a repeated one \
            starts without decoding. Quiet mode silences alerts unless --ignore-quiet. As play, \
            it starts the daemon when none answers.

            Exit status: 0 once the daemon has accepted the alert (with --wait: once it has \
            been heard); 75 with --wait when it was not played to the end (silenced by quiet \
            mode, cancelled), with the reason on stderr; 64 usage error; 65 not decodable, not \
            PCM WAV/CAF/AIFF, or longer than \(Int(SystemSound.maxSeconds)) s; 66 cannot open the file; \
            69 device unavailable or the daemon cannot run.

            EXAMPLES
              announce alert /usr/share/sounds/alsa/Front_Center.wav
              announce alert ding.wav --volume 0.4 --ignore-quiet
              make && announce alert --wait done.aiff   # exits once it was heard
            """)

    @Argument(
        help:
            "A PCM WAV, CAF or AIFF file of at most \(Int(SystemSound.maxSeconds)) s, or the name of an installed sound.",
        completion: .file())
    var file: String

    @OptionGroup var level: VolumeFlags

    // Named explicitly, as in Play.swift.
    @Flag(long: "ignore-quiet", help: "Play even while quiet mode is on.")
    var ignoreQuiet = false

    @Flag(long: "wait", help: "Wait until the alert has been heard, and exit as play does.")
    var wait = false

    @Option(
        long: "device", short: "d",
        help: "ALSA PCM to play on (see `announce devices`); default: the daemon's.", completion: deviceCompletion)
    var device: DeviceName?

    @Flag(
        long: "quiet", short: "q",
        help: "No warnings, and no reason line for exit 75; errors are still printed.")
    var quiet = false

    func validate() throws {
        // The client makes a relative file: device absolute (OutputBackend.resolvingFile).
        if let device, let problem = device.problem(relativeFileAllowed: true) {
            throw ValidationError(optionText(problem))
        }
    }

    func run() throws {
        let logger = CLILogHandler.bootstrap(quiet: quiet)
        // Opened by its bytes (a name need not be UTF-8), shown as the parser decoded it.
        let fileName = SoundNames.resolve(RawArguments.fileNames([file])[0])
        let file = fileName.text
        do {
            // The system queue (DESIGN §8) takes the file as a descriptor opened here, checked through it.
            let handed = try RuntimeDirectory.clientTarget().isSystem ? FileHandover() : nil
            let label = absoluteFile(fileName).text
            let opened = try handed.map { handed throws(AnnounceError) in try handed.add(fileName, label: label) }
            // Checked here, with the caller's own path in the message, before the daemon is asked.
            let decoder: any AudioDecoder
            do throws(AnnounceError) { decoder = try DecoderRegistry.open(opened?.checked ?? fileName) } catch {
                throw opened.map { error.naming($0.checked.text, as: label) } ?? error
            }
            if let refusal = SystemSound.refusal(of: decoder.info, path: file) { throw refusal }
            var alert = AlertRequest(
                path: file, gain: level.linearGain, ignoreQuiet: ignoreQuiet ? true : nil,
                device: try device.map { name throws(AnnounceError) in
                    try Outputs.backend.resolvingFile(name, absolute: absolutePath)
                },
                environment: AudioEnvironment.caller())
            alert.file = absoluteFile(fileName)
            alert.loudness = level.target
            alert.handed = opened?.index
            let request = Request.alert(alert, wait: wait)
            // The daemon's own rules, so a request it would refuse never starts one.
            if let problem = request.problem { throw AnnounceError.usage(problem) }
            guard let client = try DaemonClient.connect(autoStart: true) else { return }
            let ids = try client.call(request, descriptors: handed?.descriptors ?? []).ids ?? []
            guard wait else { return }
            client.cancelOnInterrupt(ids: ids)
            let outcomes = try OutcomeWaiter.wait(for: ids, on: client, progress: false) { _ in }
            let status = reportOutcomes(
                outcomes, of: ids.map { (id: $0, path: file) }, json: false, quiet: quiet, logger: logger)
            if status != 0 { throw ExitCode(status) }
        } catch let error as AnnounceError {
            throw reportedExit(error)
        }
    }
}
