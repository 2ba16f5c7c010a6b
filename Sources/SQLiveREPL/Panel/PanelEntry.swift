import SQLiveEngine

/// One live query as the panel shows it: its latest result (or error) and
/// the header line above it.
///
/// ```text
/// -- top v7 (external, coalesced 3) 14:02:11
/// ```
struct PanelEntry: Hashable, Sendable {
    var name: String
    var version: Int
    /// The header's words after the version: `watching, reads players`
    /// for the first result, `external, coalesced 3` after a change.
    var detail: String
    /// When the latest version (or error) arrived, `HH:mm:ss`.
    var time: String
    var result: LiveQueryResult
    /// The result this version is highlighted against: the version drawn
    /// before it (`nil` for a first result).
    var previous: LiveQueryResult?
    /// The error of the latest refresh; the query recovers by itself.
    var error: String?
    var paused = false
    /// Whether this version was drawn. Until it is, newer changes keep
    /// `previous`, so the highlight covers everything not yet seen.
    var drawn = false

    /// `-- NAME vVERSION (DETAIL) TIME`, or `(error)` when the last refresh failed.
    var header: String {
        "-- \(name) v\(version) (\(error == nil ? detail : "error")) \(time)" + (paused ? " · paused" : "")
    }

    /// The entry of a query just registered (or redefined).
    init(_ snapshot: LiveQuerySnapshot, replaced: Bool, time: String) {
        name = snapshot.name
        version = snapshot.version
        detail = LiveQueryPrinter.registeredDetail(snapshot, replaced: replaced)
        self.time = time
        result = snapshot.result
    }

    init(
        name: String, version: Int, detail: String, time: String, result: LiveQueryResult,
        previous: LiveQueryResult? = nil, error: String? = nil, paused: Bool = false
    ) {
        self.name = name
        self.version = version
        self.detail = detail
        self.time = time
        self.result = result
        self.previous = previous
        self.error = error
        self.paused = paused
    }

    /// Takes a newer version; older ones are ignored. `shown`: the version
    /// is shown now (re-printed above the prompt while the panel is not
    /// shown), so the next one is highlighted against it.
    mutating func apply(_ change: LiveQueryChange, time: String, shown: Bool = false) {
        guard change.version > version else { return }
        // The result on screen, or (never drawn) the one before this change.
        if drawn || previous == nil { previous = result }
        version = change.version
        detail = "\(change.cause.rawValue), coalesced \(change.coalesced)"
        self.time = time
        result = change.result
        error = nil
        drawn = shown
    }

    /// The latest refresh failed.
    mutating func fail(_ message: String, time: String) {
        error = message
        self.time = time
        drawn = false
    }
}
