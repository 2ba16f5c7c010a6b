/// A live-query event on its way out of the scheduler, with who may see it.
///
/// Every event reaches the handle of the query it is about. A listed
/// query's (one registered by name) also reaches `liveQueryEvents()` and
/// `sessionEvents()`; an unlisted one's (the schema watch, an editor's
/// inline result) reaches its handle only. File events are everyone's.
struct LiveQueryNotice: Sendable {
    var event: LiveQueryEvent
    var isListed: Bool

    init(_ event: LiveQueryEvent, isListed: Bool = true) {
        self.event = event
        self.isListed = isListed
    }
}

/// Whether `liveQueries()` lists a live query and `liveQueryEvents()`
/// tells its changes, or only its handle knows of it.
enum LiveQueryVisibility: Sendable {
    /// Registered by name: listed, reachable by name, in every event stream.
    case listed
    /// Owned by its handle alone: no list shows it, no name reaches it.
    case unlisted
}
