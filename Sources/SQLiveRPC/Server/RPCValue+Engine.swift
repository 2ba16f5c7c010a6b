import SQLiveEngine
import SQLiveProtocol

// The protocol's values know nothing of the engine: these conversions are
// the one place where the two meet.

extension RPCValue {
    /// The protocol form of an engine value.
    init(_ value: SQLValue) {
        switch value {
        case .null: self = .null
        case .integer(let integer): self = .integer(integer)
        case .real(let real): self = .real(real)
        case .text(let text): self = .text(text)
        case .blob(let data): self = .blob(data)
        }
    }

    /// The engine value to bind.
    var sqlValue: SQLValue {
        switch self {
        case .null: .null
        case .integer(let integer): .integer(integer)
        case .real(let real): .real(real)
        case .text(let text): .text(text)
        case .blob(let data): .blob(data)
        }
    }
}

extension RPCParameters {
    /// The protocol form of an engine's parameters.
    init(_ parameters: QueryParameters) {
        switch parameters {
        case .positional(let values): self = .positional(values.map(RPCValue.init))
        case .named(let values): self = .named(values.mapValues(RPCValue.init))
        case .shell: self = .positional([])
        }
    }

    /// The engine's parameters to bind.
    var queryParameters: QueryParameters {
        switch self {
        case .positional(let values): .positional(values.map(\.sqlValue))
        case .named(let values): .named(values.mapValues(\.sqlValue))
        }
    }
}

extension Sequence where Element == [SQLValue] {
    /// The rows in their protocol form.
    var rpcRows: RPCRows { map { $0.map(RPCValue.init) } }
}

extension ProfileCounters {
    /// The engine's counters, zeros left out.
    init(_ counters: StatementCounters) {
        self.init(
            fullScanSteps: counters.fullScanSteps, sorts: counters.sorts, autoIndexRows: counters.autoIndexRows,
            vmSteps: counters.vmSteps, memoryBytes: counters.memoryBytes)
    }
}

extension LiveQueryDelivery {
    /// What `diff` asks of a live query's notifications.
    init(_ option: DiffOption) {
        switch option {
        case .off: self = .rows
        case .withRows: self = .rowsAndDiff
        case .only: self = .changesOnly
        }
    }
}

extension DiffOption {
    init(_ delivery: LiveQueryDelivery) {
        switch delivery {
        case .rows: self = .off
        case .rowsAndDiff: self = .withRows
        case .changesOnly: self = .only
        }
    }
}

extension LiveQueryChangedNotification.Changes {
    /// The engine's changes, with the key's column names.
    init(_ changes: RowChanges, columns: [String]) {
        self.init(
            key: changes.keyColumns.map { $0.map { columns[$0] } },
            removed: changes.removed.map { .init(from: $0.from, row: $0.row.map(RPCValue.init)) },
            added: changes.added.map { .init(at: $0.at, row: $0.row.map(RPCValue.init)) },
            changed: changes.changed.map { .init(from: $0.from, at: $0.at, row: $0.row.map(RPCValue.init)) })
    }
}
