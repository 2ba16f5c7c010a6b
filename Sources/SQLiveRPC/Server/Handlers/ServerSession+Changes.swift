import SQLiveEngine
import SQLiveProtocol

extension ServerSession {
    /// `changes/subscribe`: one task forwards the feed as `changes/rows`
    /// notifications until `changes/unsubscribe`, a new database or the end.
    func subscribeChanges(_ params: ChangesSubscribeRequest.Params) throws(ResponseError)
        -> ChangesSubscribeRequest.Result
    {
        let database = try openDatabase()
        let feed = database.rowChanges(tables: params.tables)
        let subscription = nextChangeSubscription
        nextChangeSubscription += 1
        let writer = self.writer
        changeSubscriptions[subscription] = Task {
            for await commit in feed {
                let params = ChangesRowsNotification.Params(
                    subscription: subscription, commit: commit.commit, cause: commit.cause.rawValue,
                    rows: commit.changes.map(ChangeFeedJSON.row))
                writer.send(Self.notification(ChangesRowsNotification.self, params))
            }
        }
        return ChangesSubscribeRequest.Result(subscription: subscription)
    }

    /// `changes/unsubscribe`.
    func unsubscribeChanges(_ params: ChangesUnsubscribeRequest.Params) throws(ResponseError) -> EmptyResult {
        guard let task = changeSubscriptions.removeValue(forKey: params.subscription) else {
            throw ResponseError(.invalidParams, "No change feed subscription \(params.subscription)")
        }
        task.cancel()
        return EmptyResult()
    }

    /// Ends every subscription (the database is closed or replaced).
    func endChangeSubscriptions() {
        for task in changeSubscriptions.values { task.cancel() }
        changeSubscriptions = [:]
    }
}
