import AnnounceModel
import AnnounceSystem
import CPosix
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The control thread's loop: it sleeps in poll() on the termination signals, the engine
/// driver's mailbox, the listening socket, the session bus's controls and the clients, and
/// routes what woke it to the queue controller. It sleeps with no timeout while idle; its
/// timed wake-ups are the controller's next deadline, the idle exit and the accept pause.
final class ControlLoop {
    private let listener: Int32
    private let signals: Int32
    private let mailbox: Mailbox
    private let controller: QueueController
    private let idleExit: Double?
    private let clock: WallClock
    private let skipTo: (@Sendable (Double) -> Void)?
    private var stopping = false
    private var idleSince: Double?
    /// Out of descriptors: new clients wait in the backlog a moment instead of spinning the loop.
    private var acceptResumeAt: Double?
    /// How long the listener rests after running out of descriptors.
    static let acceptPause = 0.1

    /// A user's daemon's link to the system queue, as its listener.
    private let systemQueue: SystemQueueLink?

    init(
        listener: Int32, signals: Int32, mailbox: Mailbox, controller: QueueController, idleExit: Double?,
        clock: @escaping WallClock, skipTo: (@Sendable (Double) -> Void)?, systemQueue: SystemQueueLink? = nil
    ) {
        self.listener = listener
        self.systemQueue = systemQueue
        self.signals = signals
        self.mailbox = mailbox
        self.controller = controller
        self.idleExit = idleExit
        self.clock = clock
        self.skipTo = skipTo
    }

    private var logger: Logger { controller.logger }
    private var hub: EventHub { controller.hub }

    func run() {
        var descriptors: [pollfd] = []
        var order: [Int32] = []
        while !stopping {
            descriptors.removeAll(keepingCapacity: true)
            order.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: signals, events: Int16(POLLIN), revents: 0))
            descriptors.append(pollfd(fd: mailbox.wakeup.fd, events: Int16(POLLIN), revents: 0))
            let acceptPaused = acceptResumeAt.map { clock() < $0 } ?? false
            descriptors.append(pollfd(fd: acceptPaused ? -1 : listener, events: Int16(POLLIN), revents: 0))
            descriptors.append(pollfd(fd: controller.sessionBus?.wakeup.fd ?? -1, events: Int16(POLLIN), revents: 0))
            for (fd, connection) in hub.connections {
                descriptors.append(
                    pollfd(fd: fd, events: Int16(POLLIN) | (connection.wantsToWrite ? Int16(POLLOUT) : 0), revents: 0))
                order.append(fd)
            }
            // The system queue's listeners: their socket, then each connected daemon.
            let route = controller.listenerRoute
            let links = route.map { Array($0.links.values) } ?? []
            let routeStart = descriptors.count
            descriptors.append(pollfd(fd: systemQueue?.watch ?? -1, events: Int16(POLLIN), revents: 0))
            if let route {
                descriptors.append(pollfd(fd: route.socket.fd, events: Int16(POLLIN), revents: 0))
                for link in links {
                    descriptors.append(
                        pollfd(
                            fd: link.connection.fd,
                            events: Int16(POLLIN) | (link.connection.wantsToWrite ? Int16(POLLOUT) : 0), revents: 0))
                }
            }
            let deadline = nextDeadline
            let ready = poll(&descriptors, nfds_t(descriptors.count), pollTimeout(until: deadline, now: clock()))
            if ready < 0 && errno != EINTR {
                logger.critical("poll failed: \(systemErrorMessage(errno))")
                return
            }
            if ready == 0, let skipTo, let deadline, !controller.isPlaying { skipTo(deadline) }
            // Whatever woke the loop may start an item: quiet hours and duck level as the file says now.
            controller.rereadConfigurationIfChanged()
            if descriptors[0].revents != 0 { handleSignals() }
            if descriptors[1].revents != 0 { for report in mailbox.take() { controller.handle(report) } }
            if descriptors[2].revents != 0 { acceptClients() }
            if descriptors[3].revents != 0 {
                for control in controller.sessionBus?.take() ?? [] { controller.handle(control) }
            }
            for (index, fd) in order.enumerated() where descriptors[index + 4].revents != 0 {
                guard let connection = hub.connections[fd] else { continue }
                if descriptors[index + 4].revents & Int16(POLLOUT) != 0 { connection.flush() }
                if descriptors[index + 4].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { serve(connection) }
            }
            if let route {
                if descriptors[routeStart + 1].revents != 0 { route.accept() }
                for (index, link) in links.enumerated() where descriptors[routeStart + 2 + index].revents != 0 {
                    if descriptors[routeStart + 2 + index].revents & Int16(POLLOUT) != 0 { link.connection.flush() }
                    if descriptors[routeStart + 2 + index].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                        link.serve()
                    }
                }
                route.reap()
            }
            let left = hub.reap()
            if systemQueue != nil { controller.systemQueueLeft(left) }
            if let systemQueue {
                if descriptors[routeStart].revents != 0 {
                    systemQueue.changed(hub: hub)
                } else {
                    systemQueue.reconnectIfDropped(hub: hub)
                }
            }
            handleTimers(now: clock())
            controller.reportWaits(now: clock())
            controller.showOnSessionBus()
            controller.watchOtherApplications()
        }
    }

    private var nextDeadline: Double? {
        [controller.nextDeadline, idleDeadline, acceptResumeAt].compactMap { $0 }.min()
    }

    /// poll()'s timeout for `deadline`; a test's clock does not wait in real time while nothing is in flight.
    private func pollTimeout(until deadline: Double?, now: Double) -> Int32 {
        guard let deadline else { return -1 }
        if skipTo != nil && !controller.isPlaying { return 0 }
        // Clamped as a Double first: a far deadline must not trap in the conversion.
        return Int32(min(max(0, ((deadline - now) * 1000).rounded(.up)), Double(Int32.max)))
    }

    private var idleDeadline: Double? {
        guard let idleExit, let idleSince else { return nil }
        return idleSince + idleExit
    }

    private func handleTimers(now: Double) {
        controller.handleTimers(now: now)
        if !(controller.isIdle && hub.isEmpty) { idleSince = nil } else if idleSince == nil { idleSince = now }
        if let deadline = idleDeadline, deadline <= now {
            logger.info("idle for \(idleExit ?? 0) s; exiting")
            stopping = true
        }
    }

    private func handleSignals() {
        while case let signal = announce_read_signal(signals), signal != 0 {
            logger.info("signal \(signal) received")
            stopping = true
        }
    }

    private func acceptClients() {
        while true {
            let fd = announce_unix_accept(listener)
            if fd == -EINTR { continue }
            guard fd >= 0 else {
                if fd == -EMFILE || fd == -ENFILE {
                    if acceptResumeAt == nil {
                        logger.warning("accept failed: \(systemErrorMessage(-fd)); new clients wait")
                    }
                    acceptResumeAt = clock() + Self.acceptPause
                } else if fd != -EAGAIN {
                    logger.warning("accept failed: \(systemErrorMessage(-fd))")
                }
                return
            }
            acceptResumeAt = nil
            hub.add(Connection(fd: fd, caller: controller.configuration.access?.caller(of: fd)))
        }
    }

    /// Each complete request line goes to the controller; an oversized one ends the connection.
    private func serve(_ connection: Connection) {
        let (lines, oversized) = connection.readLines()
        for line in lines {
            defer { for fd in line.descriptors { close(fd) } }  // copied by then, if taken at all
            if !connection.closing { controller.handle(line.bytes, descriptors: line.descriptors, from: connection) }
        }
        if oversized && !connection.closing {
            connection.sendAndClose(
                WireProtocol.encode(
                    Reply.refusal("request line longer than \(WireProtocol.maxLineBytes) bytes")))
        }
    }
}
