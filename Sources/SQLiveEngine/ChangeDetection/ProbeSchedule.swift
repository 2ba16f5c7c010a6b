/// When the `ExternalChangeWatcher` reads `data_version`: the decisions, as
/// a pure value.
///
/// A file event on the database's directory says "a writer is at work",
/// not "a commit is visible". SQLite writes a WAL commit's frames (the
/// event), syncs them, and only then publishes the commit in the
/// wal-index; a rollback-journal writer holds its lock until the journal
/// is gone. With `synchronous=FULL` — the default of the sqlite3 CLI, of
/// Python's module and of GRDB — the sync alone can take milliseconds, and
/// nothing signals its end. So one reading per event is not enough.
///
/// The rules:
/// - **Follow-up.** After each event, read at once, then again at growing
///   offsets from that event: every 0.25 ms for the first 4 ms, every
///   millisecond to 8 ms, then every 2, 4, 8… ms, up to about a second
///   (49 readings). A commit that becomes visible during the follow-up is
///   seen within one step: a quarter of a millisecond while a sync is
///   typical, a few ms for slow disks.
/// - **A new event restarts the follow-up**, so a writer that keeps
///   committing is followed as long as it writes.
/// - **Busy.** When a reading finds the file locked (a rollback-journal
///   commit in progress), read again after `busyRetry`, whatever the
///   follow-up says: the commit becomes visible when the lock goes.
/// - **Polling.** Without events (polling mode, or the slow safety poll
///   beside inotify), read every `pollInterval`.
struct ProbeSchedule<Instant: InstantProtocol> where Instant.Duration == Duration {
    /// Offsets from the latest event at which to read.
    static var followUpOffsets: [Duration] {
        var offsets: [Duration] = []
        var offset = Duration.zero
        // A quarter of a millisecond for 4 ms (a typical sync), then 1 ms to 8 ms.
        while offset < .milliseconds(4) {
            offsets.append(offset)
            offset += .microseconds(250)
        }
        while offset < .milliseconds(8) {
            offsets.append(offset)
            offset += .milliseconds(1)
        }
        // Then the step doubles each time the offset doubles, up to about a second.
        var step = Duration.milliseconds(2)
        while offset <= .milliseconds(1024) {
            offsets.append(offset)
            offset += step
            if offset >= step * 8 { step *= 2 }
        }
        return offsets
    }

    /// How often to read without events (changed when the watcher's
    /// inotify descriptor is made, or refused).
    var pollInterval: Duration
    let busyRetry: Duration
    private let offsets = Self.followUpOffsets

    // Mutable State
    private var lastEvent: Instant?
    /// The index in `offsets` of the next follow-up reading.
    private var nextFollowUp = 0
    private var lastReading: Instant
    /// The last reading found the file locked.
    private var isBusy = false

    init(pollInterval: Duration, busyRetry: Duration = .milliseconds(2), now: Instant) {
        self.pollInterval = pollInterval
        self.busyRetry = busyRetry
        self.lastReading = now
    }

    /// A file event arrived.
    mutating func eventDidArrive(at now: Instant) {
        lastEvent = now
        nextFollowUp = 0
    }

    /// A reading was taken; `busy` when it found the file locked.
    mutating func didRead(at now: Instant, busy: Bool) {
        lastReading = now
        isBusy = busy
        if let lastEvent {
            while nextFollowUp < offsets.count && lastEvent.advanced(by: offsets[nextFollowUp]) <= now {
                nextFollowUp += 1
            }
            if nextFollowUp >= offsets.count { self.lastEvent = nil }
        }
    }

    /// When the next reading is due.
    func nextReading() -> Instant {
        var next = lastReading.advanced(by: pollInterval)
        if let lastEvent, nextFollowUp < offsets.count {
            next = min(next, lastEvent.advanced(by: offsets[nextFollowUp]))
        }
        if isBusy {
            next = min(next, lastReading.advanced(by: busyRetry))
        }
        return next
    }
}
