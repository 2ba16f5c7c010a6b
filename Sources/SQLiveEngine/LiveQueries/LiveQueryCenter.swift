import Foundation
import GRDB
import Synchronization

/// Wires change detection to the scheduler for one database.
///
/// ```text
///  sqlive's commits ──► ChangeRecorder (TransactionObserver) ───────────┐
///  other writers ──► InotifyMonitor / PollingMonitor ──► DataVersionProbe ┤
///                                                                        ▼
///                                            AsyncStream<ChangeSignal> ──► RefreshScheduler (actor)
///                                                                        │  Mark → Refresh → Cool down
///                                                                        ▼
///                                            Broadcaster<LiveQueryEvent> ──► front ends
/// ```
final class LiveQueryCenter: Sendable {
    let scheduler: RefreshScheduler
    let events = Broadcaster<LiveQueryEvent>()
    private let recorder: ChangeRecorder
    private let writer: any DatabaseWriter
    private let location: DatabaseLocation
    private let options: LiveQueryOptions
    private let signals: AsyncStream<ChangeSignal>
    private let signalContinuation: AsyncStream<ChangeSignal>.Continuation
    private let probeRequests: AsyncStream<Void>
    private let probeContinuation: AsyncStream<Void>.Continuation

    // Mutable State: guarded by the mutex; set by start() and shutdown().
    private struct State {
        var monitors: [any ExternalChangeMonitor] = []
        var tasks: [Task<Void, Never>] = []
    }
    private let state = Mutex(State())

    init(writer: any DatabaseWriter, location: DatabaseLocation, tracer: StatementTracer, options: LiveQueryOptions) {
        self.writer = writer
        self.location = location
        self.options = options
        (signals, signalContinuation) = AsyncStream<ChangeSignal>.makeStream()
        // Probe requests are idempotent ("look now"): one waiting request
        // covers any number of signals that arrive during a probe.
        (probeRequests, probeContinuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let continuation = signalContinuation
        let recorder = ChangeRecorder { signal in continuation.yield(signal) }
        self.recorder = recorder
        self.scheduler = RefreshScheduler(
            reader: writer, tracer: tracer, events: events, options: options,
            interestDidChange: { region in recorder.interest.withLock { $0 = region } })
    }

    /// Starts observing: the recorder on the writer, the external monitors,
    /// the probe, and the scheduler's loop.
    func start() async throws {
        let recorder = recorder
        try await writer.writeWithoutTransaction { db in
            try recorder.prime(db)
            db.add(transactionObserver: recorder, extent: .observerLifetime)
        }

        let scheduler = scheduler
        let signals = signals
        var tasks = [
            Task {
                for await signal in signals {
                    await scheduler.handle(signal)
                }
            }
        ]

        if let path = location.filePath, options.externalDetection != .disabled {
            let probe = DataVersionProbe(writer: writer, path: path)
            // The baseline is read before `open` returns: any commit by
            // another process after that is seen, even one made before the
            // probe's task first runs.
            let baseline = (version: try await probe.dataVersion(), identity: probe.fileIdentity())
            let monitors = startMonitors(path: path)
            let requests = probeRequests
            let continuation = signalContinuation
            tasks.append(
                Task {
                    await Self.runProbe(probe, baseline: baseline, requests: requests, emit: { continuation.yield($0) })
                })
            state.withLock { $0.monitors = monitors }
        }
        state.withLock { $0.tasks = tasks }
    }

    private func startMonitors(path: String) -> [any ExternalChangeMonitor] {
        let requests = probeContinuation
        let signal: @Sendable () -> Void = { requests.yield() }
        var monitors: [any ExternalChangeMonitor] = []
        var pollingInterval: Duration? = nil
        switch options.externalDetection {
        case .automatic:
            #if canImport(Glibc)
                let inotify = InotifyMonitor(databasePath: path)
                do {
                    try inotify.start(signal: signal)
                    monitors.append(inotify)
                } catch {
                    Log.monitor.warning("\(error); polling every \(options.pollingInterval) instead")
                    pollingInterval = options.pollingInterval
                }
            #else
                pollingInterval = options.pollingInterval
            #endif
        case .polling(let interval):
            pollingInterval = interval
        case .disabled:
            return []
        }
        if let pollingInterval {
            let polling = PollingMonitor(interval: pollingInterval)
            polling.start(signal: signal)
            monitors.append(polling)
        }
        let safety = PollingMonitor(interval: options.safetyPollInterval)
        safety.start(signal: signal)
        monitors.append(safety)
        return monitors
    }

    /// Answers probe requests one at a time, until the requests end.
    private static func runProbe(
        _ probe: DataVersionProbe, baseline: (version: Int, identity: DataVersionProbe.FileIdentity?),
        requests: AsyncStream<Void>, emit: @Sendable (ChangeSignal) -> Void
    ) async {
        var lastVersion = baseline.version
        var lastIdentity = baseline.identity
        for await _ in requests {
            let identity = probe.fileIdentity()
            if identity != lastIdentity {
                let path = probe.path ?? ""
                emit(.fileChanged(identity == nil ? "\(path) was deleted" : "\(path) was replaced by another file"))
                lastIdentity = identity
            }
            do {
                let version = try await probe.dataVersion()
                if version != lastVersion {
                    lastVersion = version
                    emit(.external)
                }
            } catch {
                // A writer holding the lock beyond the busy timeout, or a
                // closed database: the next signal (or the safety poll)
                // probes again, so nothing is lost.
                Log.monitor.debug("probing data_version: \(error)")
            }
        }
    }

    /// Stops every monitor and task, and drops every live query.
    func shutdown() async {
        let (monitors, tasks) = state.withLock { state in
            defer {
                state.monitors = []
                state.tasks = []
            }
            return (state.monitors, state.tasks)
        }
        for monitor in monitors { monitor.stop() }
        probeContinuation.finish()
        signalContinuation.finish()
        for task in tasks { task.cancel() }
        await scheduler.shutdown()
        events.finish()
        let recorder = recorder
        do {
            try await writer.writeWithoutTransaction { db in db.remove(transactionObserver: recorder) }
        } catch {
            Log.monitor.debug("removing the change recorder: \(error)")
        }
    }
}
