import Foundation
import SQLiveEngine
import SQLiveProtocol

extension ServerSession {
    /// `liveQuery/register`.
    func registerLiveQuery(_ params: LiveQueryRegisterRequest.Params) async throws(ResponseError)
        -> LiveQuerySnapshotResult
    {
        let database = try openDatabase()
        let definition = LiveQueryDefinition(
            sql: params.sql, parameters: params.params?.queryParameters ?? .none, maxRows: params.maxRows)
        do {
            return Self.snapshotResult(
                try await liveQueries(of: database).register(
                    name: params.name, definition, delivery: LiveQueryDelivery(params.diff ?? .off)))
        } catch {
            throw ResponseError(error)
        }
    }

    /// `liveQuery/update`.
    func updateLiveQuery(_ params: LiveQueryUpdateRequest.Params) async throws(ResponseError)
        -> LiveQuerySnapshotResult
    {
        let database = try openDatabase()
        do {
            let snapshot = try await liveQueries(of: database).update(
                name: params.name, sql: params.sql, parameters: params.params?.queryParameters,
                maxRows: params.maxRows.map { .some($0) }, delivery: params.diff.map(LiveQueryDelivery.init))
            return Self.snapshotResult(snapshot)
        } catch {
            throw ResponseError(error)
        }
    }

    static func snapshotResult(_ snapshot: LiveQuerySnapshot) -> LiveQuerySnapshotResult {
        LiveQuerySnapshotResult(
            name: snapshot.name, version: snapshot.version, columns: snapshot.result.columns,
            rows: snapshot.result.rows.rpcRows, truncated: snapshot.result.truncated, tables: snapshot.tables,
            total: snapshot.result.total)
    }

    /// `liveQuery/unregister`.
    func unregisterLiveQuery(_ params: LiveQueryNameParams) async throws(ResponseError) -> EmptyResult {
        try await onLiveQuery(params) { directory, name throws(SQLiveError) in
            try await directory.unregister(name: name)
        }
    }

    /// `liveQuery/pause`.
    func pauseLiveQuery(_ params: LiveQueryNameParams) async throws(ResponseError) -> EmptyResult {
        try await onLiveQuery(params) { directory, name throws(SQLiveError) in
            try await directory.pause(name: name)
        }
    }

    /// `liveQuery/resume`.
    func resumeLiveQuery(_ params: LiveQueryNameParams) async throws(ResponseError) -> EmptyResult {
        try await onLiveQuery(params) { directory, name throws(SQLiveError) in
            try await directory.resume(name: name)
        }
    }

    /// A method that acts on one live query by name and answers `{}`.
    private func onLiveQuery(
        _ params: LiveQueryNameParams,
        _ action: (LiveQueryDirectory, String) async throws(SQLiveError) -> Void
    ) async throws(ResponseError) -> EmptyResult {
        let database = try openDatabase()
        do {
            try await action(liveQueries(of: database), params.name)
        } catch {
            throw ResponseError(error)
        }
        return EmptyResult()
    }

    /// `liveQuery/list`.
    func listLiveQueries(_ params: LiveQueryListRequest.Params) async throws(ResponseError)
        -> LiveQueryListRequest.Result
    {
        let database = try openDatabase()
        let directory = liveQueries(of: database)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var liveQueries = await directory.list().map { info in
            LiveQueryListRequest.LiveQuery(
                name: info.name, sql: info.definition.sql,
                params: info.definition.parameters.isEmpty ? nil : RPCParameters(info.definition.parameters),
                tables: info.tables, region: info.region, version: info.version, refreshes: info.refreshes,
                paused: info.paused, lastRefresh: info.lastRefresh.map { formatter.string(from: $0) },
                lastRefreshMs: info.lastRefreshDuration?.protocolMilliseconds,
                error: info.error.map(ResponseError.init),
                diff: DiffOption(info.delivery), precision: info.precision.rawValue, readsSession: info.readsSession,
                lastRunMs: info.lastRun?.elapsed.protocolMilliseconds,
                counters: info.lastRun.map { ProfileCounters($0.counters) })
        }
        for (index, info) in zip(liveQueries.indices, await directory.list()) where info.defects > 0 {
            liveQueries[index].defects = info.defects
        }
        if params.rows == true {
            for index in liveQueries.indices {
                guard let (snapshot, _) = try? await directory.current(name: liveQueries[index].name) else { continue }
                liveQueries[index].columns = snapshot.result.columns
                liveQueries[index].rows = snapshot.result.rows.rpcRows
                liveQueries[index].truncated = snapshot.result.truncated
                liveQueries[index].total = snapshot.result.total
                liveQueries[index].version = snapshot.version
            }
        }
        return LiveQueryListRequest.Result(liveQueries: liveQueries)
    }
}
