/// What `liveQuery/changed` notifications carry, as `liveQuery/register`'s
/// and `liveQuery/update`'s `diff` says: `false` (the rows), `true` (the
/// rows and `diff`, the rows added and removed) or `"only"` (after the
/// first full answer, only `changes`).
public enum DiffOption: Hashable, Sendable, Codable {
    case off
    case withRows
    case only

    public init(from decoder: any Decoder) throws {
        let json = try JSONValue(from: decoder)
        switch json {
        case .bool(let enabled): self = enabled ? .withRows : .off
        case .string("only"): self = .only
        default:
            throw DecodingError.typeMismatch(
                DiffOption.self,
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "diff must be true, false or \"only\", found \(json.kindDescription)"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .off: try container.encode(false)
        case .withRows: try container.encode(true)
        case .only: try container.encode("only")
        }
    }

    public func write(to writer: inout JSONWriter) {
        switch self {
        case .off: writer.write(bool: false)
        case .withRows: writer.write(bool: true)
        case .only: writer.write(string: "only")
        }
    }
}
