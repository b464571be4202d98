import Testing

@testable import AnnounceBus
@testable import AnnounceModel

// Expectations written from DESIGN §3, Other players.

@Suite struct OtherPlayersTests {
    @Test func pausesThosePlayingAndResumesExactlyThose() {
        var players = OtherPlayers()
        let paused = players.activate(statuses: [":1.4": .playing, ":1.5": .paused, ":1.6": .stopped, ":1.7": .playing])
        #expect(paused == [.pause([":1.4", ":1.7"])])
        players.changed(":1.4", to: .paused)  // the echo of announce's own pause
        players.changed(":1.7", to: .paused)
        #expect(players.deactivate() == [.resume([":1.4", ":1.7"])])
        #expect(players.pausedByAnnounce.isEmpty && !players.active)
    }

    @Test func aPlayerSomeoneElseTookOverIsNotResumed() {
        var players = OtherPlayers()
        _ = players.activate(statuses: [":1.4": .playing, ":1.5": .playing, ":1.6": .playing])
        for name in [":1.4", ":1.5", ":1.6"] { players.changed(name, to: .paused) }
        // The user played :1.4 and paused it again; stopped :1.5; :1.6 left the bus.
        players.changed(":1.4", to: .playing)
        players.changed(":1.4", to: .paused)
        players.changed(":1.5", to: .stopped)
        players.forget(":1.6")
        #expect(players.deactivate() == [])
    }

    @Test func aPlayingSaidBeforeThePauseTookEffectIsNoTakeOver() {
        var players = OtherPlayers()
        _ = players.activate(statuses: [":1.4": .playing, ":1.5": .playing])
        // mpv-mpris answered Pause, then still reported Playing before its Paused (seen in CI).
        let early = [players.changed(":1.4", to: .playing), players.changed(":1.4", to: .paused)]
        // Stopped before its pause took effect: it is not paused, not announce's to resume.
        let stopped = players.changed(":1.5", to: .stopped)
        #expect(early == [false, false] && stopped && players.pausedByAnnounce == [":1.4"])
        // Once seen Paused, a Playing is its user's.
        let late = players.changed(":1.4", to: .playing)
        #expect(late && players.deactivate() == [])
    }

    @Test func aKilledDaemonsPlayersStillPausedOnTheSameConnectionAreTakenBack() {
        let journal = PausedPlayersJournal(players: [
            .init(unique: ":1.4", name: "org.mpris.MediaPlayer2.mpv"),
            .init(unique: ":1.5", name: "org.mpris.MediaPlayer2.vlc"),  // the user played it meanwhile
            .init(unique: ":1.6", name: "org.mpris.MediaPlayer2.spotify"),  // restarted: another connection
            .init(unique: ":1.7", name: "org.mpris.MediaPlayer2.gone"),  // left the bus
            .init(unique: ":1.8", name: "org.mpris.MediaPlayer2.stopped")
        ])
        let owners = [
            "org.mpris.MediaPlayer2.mpv": ":1.4", "org.mpris.MediaPlayer2.vlc": ":1.5",
            "org.mpris.MediaPlayer2.spotify": ":1.9", "org.mpris.MediaPlayer2.stopped": ":1.8"
        ]
        let statuses: [String: PlaybackStatus] = [":1.4": .paused, ":1.5": .playing, ":1.9": .paused, ":1.8": .stopped]
        #expect(OtherPlayers.adoptable(journal, owners: owners, statuses: statuses) == [":1.4"])
    }

    @Test func takenBackPlayersResumeAtOnceWhenNothingPlaysElseAtTheActivitysEnd() {
        var idle = OtherPlayers()
        #expect(idle.adopt([":1.4"], active: false, statuses: [:]) == [.resume([":1.4"])])
        #expect(idle.pausedByAnnounce.isEmpty && !idle.active)
        var busy = OtherPlayers()
        // The spool's items play on: a player playing now is paused too, and both are resumed at the end.
        #expect(busy.adopt([":1.4"], active: true, statuses: [":1.4": .paused, ":1.5": .playing]) == [.pause([":1.5"])])
        #expect(busy.pausedByAnnounce == [":1.4", ":1.5"])
        busy.changed(":1.5", to: .paused)
        #expect(busy.deactivate() == [.resume([":1.4", ":1.5"])])
        var none = OtherPlayers()
        #expect(none.adopt([], active: false, statuses: [:]) == [])
    }

    @Test func noNotifyOthersLeavesThemPaused() {
        var players = OtherPlayers()
        #expect(players.activate(statuses: [":1.4": .playing]) == [.pause([":1.4"])])
        #expect(players.deactivate(notifyOthers: false) == [])
        #expect(players.pausedByAnnounce.isEmpty)
    }

    @Test func nothingPlayingPausesNothingAndActivationIsOnce() {
        var players = OtherPlayers()
        #expect(players.activate(statuses: [":1.4": .paused]) == [])
        #expect(players.activate(statuses: [":1.4": .playing]) == [])  // already active: no second round
        #expect(players.deactivate() == [])
        #expect(players.deactivate() == [])
    }

    @Test func theActivityLastsWhileTheMainLanePlaysOrWaitsUnpaused() {
        #expect(OtherPlayers.nonMixableActive(mainLanePlaying: true, queuePaused: false, mainLaneWaiting: false))
        #expect(OtherPlayers.nonMixableActive(mainLanePlaying: false, queuePaused: false, mainLaneWaiting: true))
        #expect(!OtherPlayers.nonMixableActive(mainLanePlaying: false, queuePaused: true, mainLaneWaiting: true))
        #expect(!OtherPlayers.nonMixableActive(mainLanePlaying: false, queuePaused: false, mainLaneWaiting: false))
    }
}

@Suite struct NowPlayingTests {
    private func item(_ id: ItemID, _ state: ItemStatus.State, duration: Double? = nil) -> ItemStatus {
        var item = ItemStatus(id: id, state: state, path: "/sounds/\(id).wav", priority: .normal)
        item.duration = duration
        return item
    }

    @Test func playingShowsTheMainLaneItem() {
        let status = DaemonStatus(
            pid: 1, device: "null", deviceOpen: true, paused: false,
            playing: item("a1", .playing, duration: 2.5), queued: [item("b2", .queued)], scheduled: [])
        #expect(
            NowPlaying(status)
                == NowPlaying(status: .playing, id: "a1", title: "/sounds/a1.wav", duration: 2.5, hasNext: true))
    }

    @Test func aPausedQueueShowsWhatItHolds() {
        let status = DaemonStatus(
            pid: 1, device: "null", deviceOpen: false, paused: true, playing: nil,
            queued: [item("b2", .interrupted)], scheduled: [])
        #expect(NowPlaying(status) == NowPlaying(status: .paused, id: "b2", title: "/sounds/b2.wav", hasNext: false))
    }

    @Test func nothingIsStopped() {
        let status = DaemonStatus(
            pid: 1, device: "null", deviceOpen: false, paused: true, playing: nil, queued: [], scheduled: [])
        #expect(NowPlaying(status) == .stopped)
    }

    @Test func controlsAreTheQueueRequests() {
        #expect(NowPlaying.request(for: .pause, paused: false) == .pause)
        #expect(NowPlaying.request(for: .play, paused: true) == .resume)
        #expect(NowPlaying.request(for: .playPause, paused: true) == .resume)
        #expect(NowPlaying.request(for: .playPause, paused: false) == .pause)
        #expect(NowPlaying.request(for: .next, paused: false) == .skip)
        #expect(NowPlaying.request(for: .stop, paused: false) == .stop)
    }

    @Test func trackPathsAreValidObjectPaths() {
        #expect(MPRISPlayer.trackPath("9acad52e37ec") == "/org/announce/item/i9acad52e37ec")
        #expect(MPRISPlayer.trackPath("a-b.c") == "/org/announce/item/ia_2Db_2Ec")
    }
}

@Suite struct SessionBusAddressTests {
    @Test func theEnvironmentWinsThenTheUsersSocket() {
        #expect(SessionBusAddress.find(environment: "unix:path=/tmp/bus") == .found("unix:path=/tmp/bus"))
        // An empty variable is no address; a user with no /run/user directory has no bus there.
        #expect(
            SessionBusAddress.find(environment: "", uid: 3_999_999)
                == .none(
                    reason:
                        "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and /run/user/3999999/bus does not exist"))
    }
}
