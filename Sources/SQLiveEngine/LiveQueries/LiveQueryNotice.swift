import Synchronization

/// One registration of a live query: what the engine keys it by
/// (`LiveQueryHandle.id`). Names are a front end's (`LiveQueryDirectory`);
/// two registrations never share an id, even of the same name.
public struct LiveQueryID: Hashable, Comparable, Sendable, CustomStringConvertible {
    let value: UInt64

    private static let last = Atomic<UInt64>(0)

    /// A new id, later than every one before it.
    static func next() -> LiveQueryID {
        LiveQueryID(value: last.add(1, ordering: .relaxed).newValue)
    }

    public static func < (lhs: LiveQueryID, rhs: LiveQueryID) -> Bool { lhs.value < rhs.value }

    public var description: String { "#\(value)" }
}

/// Live-query events on their way out of the scheduler, each with the
/// registration it is about: one event, or the events one commit caused,
/// read from one snapshot and delivered together.
///
/// Every event reaches the handle of the registration it is about; the
/// `LiveQueryDirectory` that holds that handle passes it on to its
/// `events()` and the database's `sessionEvents()`. A registration no
/// directory holds (the schema watch, an editor's inline result) reaches
/// its handle only. File events (`id` nil) are everyone's.
///
/// A notice of several events is one state of the database: a front end
/// shows them together (`SessionEvent.liveBatch`), never one without the
/// others.
struct LiveQueryNotice: Sendable {
    struct Item: Sendable {
        var event: LiveQueryEvent
        /// The registration the event is about; nil for the file's events.
        var id: LiveQueryID?
    }

    var items: [Item]

    init(_ event: LiveQueryEvent, id: LiveQueryID? = nil) {
        items = [Item(event: event, id: id)]
    }

    init(batch items: [Item]) {
        self.items = items
    }

    /// The events about the registrations `includes` accepts, and the file's.
    func events(about includes: (LiveQueryID) -> Bool) -> [LiveQueryEvent] {
        items.compactMap { item in item.id.map(includes) ?? true ? item.event : nil }
    }
}
