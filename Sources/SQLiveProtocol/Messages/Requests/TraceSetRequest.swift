/// Turns the statement trace on or off.
///
/// While it is on, each statement run sends a `trace/statement`
/// notification: the user's statements, live-query refreshes, and with
/// `housekeeping: true` the transaction and pragma statements around them.
/// With `profile: true`, each carries its time and rows. The settings
/// outlive `database/open`.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 12, "method": "trace/set", "params": {"enabled": true, "profile": true}}
/// <-- {"jsonrpc": "2.0", "id": 12, "result": {}}
/// ```
public enum TraceSetRequest: RequestType {
    public static let method = "trace/set"

    public struct Params: Codable, Sendable {
        public var enabled: Bool
        public var profile: Bool?
        public var housekeeping: Bool?

        public init(enabled: Bool, profile: Bool? = nil, housekeeping: Bool? = nil) {
            self.enabled = enabled
            self.profile = profile
            self.housekeeping = housekeeping
        }
    }

    public typealias Result = EmptyResult
}
