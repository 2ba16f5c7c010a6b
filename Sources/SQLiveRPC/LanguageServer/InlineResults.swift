import Foundation
import SQLiveEngine
import SQLiveLocks
import SQLiveProtocol

/// Each read-only statement's result, in brief, kept live: what inlay
/// hints and code lens titles show, as a Swift playground shows each
/// line's value.
///
/// A statement is evaluated the first time a client asks about it (its
/// range in an inlay-hint request, or its document's code lenses): on the
/// confined reader, read-only, within a budget (100 ms). One that fits
/// becomes a live query owned by its document (an unlisted
/// `LiveQueryHandle`): when its result changes, whoever wrote, `changed`
/// is called, and the next request shows the new result. One that writes
/// is never run; one over the budget says so. A document holds at most
/// `maximumPerDocument` of them; those whose SQL left the document, and
/// all of a closed document's, are ended.
///
/// Ownership: the entries own their handles and forwarding tasks;
/// `close(uri:)`, `prune` and `stop()` end them.
final class InlineResults: Sendable {
    static let budget = Duration.milliseconds(100)
    static let maximumPerDocument = 100
    /// The most rows a live inline result reads.
    static let rowCap = 10_000

    private struct Entry {
        var handle: LiveQueryHandle?
        var forwarder: Task<Void, Never>?
        /// What it shows when it is not live: an error, over the budget,
        /// or nothing (nil: it writes).
        var fixed: String?
        /// Being evaluated by a request: others show nothing meanwhile.
        var evaluating = false

        func end() {
            forwarder?.cancel()
        }
    }

    // Mutable State: guarded by the mutex; entries by document URI, then
    // by statement text.
    private struct State {
        var documents: [String: [String: Entry]] = [:]
        var stopped = false
    }
    private let state = Locked(State())
    /// Evaluations block (they run SQL): on a queue of their own, never on
    /// Swift concurrency's threads.
    private let queue = DispatchQueue(label: "sqlive.inline-results")
    private let changed: @Sendable () -> Void

    init(changed: @escaping @Sendable () -> Void) {
        self.changed = changed
    }

    /// The briefs of statements of a document (by their SQL), evaluating
    /// those not seen yet; a statement with no brief (it writes, or is
    /// being evaluated) is left out.
    func briefs(
        uri: String, statements: [(sql: String, reads: Bool)], database: LiveDatabase, reader: ConfinedReader?
    ) async -> [String: String] {
        var briefs: [String: String] = [:]
        for (sql, reads) in statements where briefs[sql] == nil {
            enum Next {
                case show(String?)
                case live(LiveQueryHandle)
                case evaluate
            }
            let next = state.withLock { state -> Next in
                guard !state.stopped else { return .show(nil) }
                if let entry = state.documents[uri]?[sql] {
                    if let handle = entry.handle { return .live(handle) }
                    return .show(entry.evaluating ? nil : entry.fixed)
                }
                guard reads else {
                    state.documents[uri, default: [:]][sql] = Entry(fixed: nil)
                    return .show(nil)
                }
                guard (state.documents[uri]?.count ?? 0) < Self.maximumPerDocument else {
                    return .show("… more than \(Self.maximumPerDocument) statements: not run by themselves")
                }
                state.documents[uri, default: [:]][sql] = Entry(evaluating: true)
                return .evaluate
            }
            switch next {
            case .show(let text):
                briefs[sql] = text
            case .live(let handle):
                if let (snapshot, error) = try? await handle.current() {
                    briefs[sql] = Self.brief(snapshot.result, error: error)
                }
            case .evaluate:
                briefs[sql] = await evaluate(uri: uri, sql: sql, database: database, reader: reader)
            }
        }
        return briefs
    }

    /// A new statement: run within the budget, then kept live.
    private func evaluate(uri: String, sql: String, database: LiveDatabase, reader: ConfinedReader?) async -> String? {
        let trial = await withCheckedContinuation { (continuation: CheckedContinuation<Trial, Never>) in
            queue.async { continuation.resume(returning: Self.trial(sql, database: database, reader: reader)) }
        }
        var entry = Entry()
        switch trial {
        case .writes:
            entry.fixed = nil
        case .failed(let message):
            entry.fixed = message
        case .fits:
            do {
                let handle = try await database.watch(name: "inline", LiveQueryDefinition(sql: sql))
                let changed = self.changed
                entry.handle = handle
                entry.forwarder = Task {
                    for await event in handle.events where event.name != nil { changed() }
                }
            } catch {
                entry.fixed = "⚠ \(error.description)"
            }
        }
        let kept = state.withLock { state -> Bool in
            guard !state.stopped, state.documents[uri]?[sql] != nil else { return false }
            state.documents[uri]?[sql] = entry
            return true
        }
        guard kept else {
            // The document was closed, or the statement edited away, meanwhile.
            entry.end()
            return nil
        }
        if let handle = entry.handle { return Self.brief(handle.first.result, error: nil) }
        return entry.fixed
    }

    private enum Trial {
        case fits, writes
        case failed(String)
    }

    /// Runs a statement once within the budget: on the confined reader
    /// for a file, on the session's connection for an in-memory database
    /// (the caller has judged that it only reads).
    private static func trial(_ sql: String, database: LiveDatabase, reader: ConfinedReader?) -> Trial {
        let overBudget = "⏱ over \(Int(budget.protocolMilliseconds)) ms: not run by itself (▶ Run runs it)"
        if let reader {
            do {
                let outcome = try reader.run(sql, limits: .init(time: budget, rows: rowCap, bytes: 64 << 20))
                return outcome == .writes ? .writes : .fits
            } catch {
                if error.sqliteFailure?.code == 9 { return .failed(overBudget) }
                return .failed("⚠ \(error.description)")
            }
        }
        let deadline = ContinuousClock.now.advanced(by: budget)
        var collector = ResultCollector()
        do {
            try database.run(
                sql, maxRows: rowCap, traced: false, forClient: true, isCancelled: { ContinuousClock.now >= deadline },
                consumer: &collector)
            return .fits
        } catch let failure as SQLiteFailure {
            return failure.code == 9 ? .failed(overBudget) : .failed("⚠ \(failure.message)")
        } catch {
            return .failed("⚠ \(error)")
        }
    }

    /// Ends the entries whose statements are no longer in the document.
    func prune(uri: String, keeping statements: Set<String>) {
        let ended = state.withLock { state -> [Entry] in
            guard let entries = state.documents[uri] else { return [] }
            let gone = entries.filter { !statements.contains($0.key) }
            for key in gone.keys { state.documents[uri]?[key] = nil }
            return Array(gone.values)
        }
        for entry in ended { entry.end() }
    }

    /// Ends a closed document's live results.
    func close(uri: String) {
        let ended = state.withLock { $0.documents.removeValue(forKey: uri) }
        for entry in ended?.values ?? [:].values { entry.end() }
    }

    /// Ends every document's live results (their database changed); the
    /// next requests evaluate their statements again.
    func endAll() {
        let ended = state.withLock { state -> [Entry] in
            defer { state.documents = [:] }
            return state.documents.values.flatMap(\.values)
        }
        for entry in ended { entry.end() }
    }

    /// Ends every document's live results, for good.
    func stop() {
        let ended = state.withLock { state -> [Entry] in
            state.stopped = true
            defer { state.documents = [:] }
            return state.documents.values.flatMap(\.values)
        }
        for entry in ended { entry.end() }
    }

    // MARK: - Briefs

    /// A result in a line: a single value as itself; rows as their count
    /// and first values; an error as SQLite's message.
    static func brief(_ result: LiveQueryResult, error: SQLiveError?, width: Int = 80) -> String {
        if let error { return "⚠ \(error.description)" }
        let rows = result.rows
        if rows.isEmpty { return "→ no rows" }
        if rows.count == 1, result.columns.count == 1 { return "→ " + value(rows[0][0]) }
        let count = result.total == 1 ? "1 row" : "\(result.total) rows"
        var text = "→ \(count): "
        for (index, row) in rows.enumerated() {
            let shown = row.count == 1 ? value(row[0]) : "(" + row.map { value($0) }.joined(separator: ", ") + ")"
            let separator = index == 0 ? "" : ", "
            guard text.count + separator.count + shown.count <= width else {
                text += index == 0 ? String(shown.prefix(max(0, width - text.count - 1))) + "…" : ", …"
                break
            }
            text += separator + shown
        }
        return text
    }

    /// A value as a brief shows it: text as it is (cut at 24 characters),
    /// NULL, numbers as SQLite prints them, a blob's size.
    static func value(_ value: SQLValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let integer): return String(integer)
        case .real(let real): return SQLValue.format(real: real)
        case .text(let text): return text.count > 24 ? String(text.prefix(23)) + "…" : text
        case .blob(let data): return "<blob \(data.count) bytes>"
        }
    }
}
