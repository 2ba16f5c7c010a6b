/// Live-query events on their way out of the scheduler, with who may see
/// each: one event, or the events one commit caused, read from one
/// snapshot and delivered together.
///
/// Every event reaches the handle of the query it is about. A listed
/// query's (one registered by name) also reaches `liveQueryEvents()` and
/// `sessionEvents()`; an unlisted one's (the schema watch, an editor's
/// inline result) reaches its handle only. File events are everyone's.
///
/// A notice of several events is one state of the database: a front end
/// shows them together (`SessionEvent.liveBatch`), never one without the
/// others.
struct LiveQueryNotice: Sendable {
    struct Item: Sendable {
        var event: LiveQueryEvent
        var isListed: Bool
    }

    var items: [Item]

    init(_ event: LiveQueryEvent, isListed: Bool = true) {
        items = [Item(event: event, isListed: isListed)]
    }

    init(batch items: [Item]) {
        self.items = items
    }

    /// The events every subscriber may see.
    var listedEvents: [LiveQueryEvent] {
        items.filter(\.isListed).map(\.event)
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
