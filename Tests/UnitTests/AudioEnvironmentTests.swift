import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

@Suite("AudioEnvironment: which sound-server variables a device opens with")
struct AudioEnvironmentRuleTests {
    let daemon = ["PULSE_SERVER": "unix:/daemon/native", "XDG_RUNTIME_DIR": "/run/daemon"]

    @Test("a request without variables (cron) gets the daemon's")
    func cron() {
        #expect(AudioEnvironment.effective(nil, daemon: daemon, userRuntimeDirectory: "/run/user/7") == daemon)
    }

    @Test("a request's set replaces the daemon's whole set; a missing XDG_RUNTIME_DIR is the user's logind directory")
    func caller() {
        let chosen = AudioEnvironment.effective(
            ["PULSE_COOKIE": "/c"], daemon: daemon, userRuntimeDirectory: "/run/user/7")
        #expect(chosen == ["PULSE_COOKIE": "/c", "XDG_RUNTIME_DIR": "/run/user/7"])
    }

    @Test("a daemon started with env -i gets /run/user/UID when that is the user's own, and nothing else")
    func emptyDaemon() {
        #expect(
            AudioEnvironment.effective(nil, daemon: [:], userRuntimeDirectory: "/run/user/7") == [
                "XDG_RUNTIME_DIR": "/run/user/7"
            ])
        #expect(AudioEnvironment.effective(nil, daemon: [:], userRuntimeDirectory: nil) == [:])
    }

    @Test("the caller's variables hold inside the open only; the process's own are back after it")
    func appliedOnlyWhileOpening() throws {
        let own = getenv("PULSE_SINK").map { String(cString: $0) }
        let inside = try AudioEnvironment.whileApplied(["PULSE_SINK": "caller-sink"]) { () throws(AnnounceError) in
            getenv("PULSE_SINK").map { String(cString: $0) }
        }
        #expect(inside == "caller-sink")
        #expect(getenv("PULSE_SINK").map { String(cString: $0) } == own)
    }

    @Test("the client sends only the listed variables that are set and not empty")
    func callerVariables() {
        let environment = ["PULSE_SERVER": "unix:/p", "PULSE_SINK": "", "HOME": "/home/u"]
        #expect(AudioEnvironment.caller { environment[$0] } == ["PULSE_SERVER": "unix:/p"])
        #expect(AudioEnvironment.caller { _ in nil } == nil)
    }

    @Test(
        "while a device opens, stderr goes to a scratch file and the log's descriptor does not: another thread's line stays in the log"
    )
    func logBypassesTheCapture() throws {
        func identity(_ fd: Int32) -> [UInt64] {
            var info = stat()
            return fstat(fd, &info) == 0 ? [UInt64(info.st_dev), UInt64(info.st_ino)] : []
        }
        let log = identity(LogOutput.descriptor)
        // Read under the lock that captures hold: another test's device may be opening meanwhile.
        let stderr = LogOutput.stderrChange.withLock { _ in identity(STDERR_FILENO) }
        let inside = try AudioEnvironment.whileApplied(nil) { () throws(AnnounceError) in
            (stderr: identity(STDERR_FILENO), log: identity(LogOutput.descriptor))
        }
        #expect(!log.isEmpty && inside.log == log)
        #expect(inside.stderr != stderr && inside.stderr != log, "stderr was not sent to a scratch file")
        #expect(
            LogOutput.stderrChange.withLock { _ in identity(STDERR_FILENO) } == stderr, "stderr is back after the open")
    }
}

@Suite("DeviceProbe: file: names are the caller's")
struct FileDeviceNameTests {
    let absolute: (String) -> String = { "/home/u/" + $0 }

    @Test func relativeFilesBecomeAbsoluteNamedOrPositional() throws {
        #expect(
            try DeviceProbe.resolvingFile("file:FILE=out.wav,FORMAT=wav", absolute: absolute)
                == "file:FILE=/home/u/out.wav,FORMAT=wav")
        #expect(
            try DeviceProbe.resolvingFile("file:out.wav,wav", absolute: absolute) == "file:FILE=/home/u/out.wav,wav")
        #expect(try DeviceProbe.resolvingFile("file:'a b.wav'", absolute: absolute) == #"file:FILE="/home/u/a b.wav""#)
    }

    @Test func absoluteFilesAndOtherDevicesAreLeftAlone() throws {
        #expect(
            try DeviceProbe.resolvingFile("file:FILE=/tmp/x.wav,FORMAT=raw", absolute: absolute)
                == "file:FILE=/tmp/x.wav,FORMAT=raw")
        #expect(try DeviceProbe.resolvingFile("plughw:CARD=PCH,DEV=0", absolute: absolute) == "plughw:CARD=PCH,DEV=0")
        #expect(DeviceName("file:FILE=/tmp/x.wav").problem() == nil)
        #expect(
            DeviceName("file:FILE=x.wav").problem()?.description
                == "device file:FILE=x.wav: FILE must be an absolute path")
        // A client makes it absolute before it sends.
        #expect(DeviceName("file:FILE=x.wav").problem(relativeFileAllowed: true) == nil)
    }

    @Test func aFileDeviceWithoutFileIsAUsageError() {
        for name: DeviceName in ["file:", "file", "file:FORMAT=wav"] {
            #expect(throws: AnnounceError.self, "\(name)") { try DeviceProbe.resolvingFile(name, absolute: absolute) }
        }
    }
}
