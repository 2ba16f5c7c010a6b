/// Resumes a paused live query; if anything changed meanwhile, it refreshes
/// once and sends one `liveQuery/changed`.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 9, "method": "liveQuery/resume", "params": {"name": "leaders"}}
/// <-- {"jsonrpc": "2.0", "id": 9, "result": {}}
/// ```
public enum LiveQueryResumeRequest: RequestType {
    public static let method = "liveQuery/resume"
    public typealias Params = LiveQueryNameParams
    public typealias Result = EmptyResult
}
