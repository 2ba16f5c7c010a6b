import SQLiveProtocol

/// Which era of the Model Context Protocol a session speaks, and what each
/// request may do in it (docs/mcp.md, "Two eras").
///
/// The first request decides, once: `initialize`, or any request that does
/// not carry the stateless era's envelope (`params._meta` naming a
/// `protocolVersion`), begins the handshake era (2025-11-25 and before);
/// any other request with the envelope begins the stateless era
/// (2026-07-28). This is what the SDK's own server does
/// (`serve_dual_era_loop`), and what both eras' clients expect of a server
/// that speaks both: the 2026 client's first frame is an enveloped
/// `server/discover`, and falls back to `initialize` on an error.
///
/// Then, in the handshake era, a request stamped for the stateless era is
/// refused (-32600) and the stateless era's methods are unknown (-32601).
/// In the stateless era every request goes through the envelope's ladder:
/// no `_meta`, or one without `protocolVersion` or `clientCapabilities`,
/// -32602 naming what is missing; a version not spoken, -32022 with the
/// versions that are; `initialize`, -32022; a method the era removed
/// (`ping`, `logging/setLevel`, `resources/subscribe`…), -32601.
///
/// A pure value: the connection asks it about each request, in the order
/// they arrive, before the request is scheduled.
struct MCPEra: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case undecided
        case handshake
        case modern(version: String)
    }

    private(set) var kind = Kind.undecided

    var isModern: Bool {
        if case .modern = kind { return true }
        return false
    }

    /// What becomes of one request.
    enum Screening: Sendable, Equatable {
        /// Served, with these params (a listen's carry its id).
        case proceed(JSONValue?)
        /// Answered with this error, never served.
        case refuse(ResponseError)
    }

    /// The stateless era's methods (unknown in the handshake era).
    static let modernOnly: Set<String> = [
        MCPProtocol.Method.serverDiscover, MCPProtocol.Method.subscriptionsListen,
    ]

    /// Decides the era at the first request, then screens each.
    mutating func screen(id: RequestID, method: String, params: JSONValue?) -> Screening {
        let meta = params?["_meta"]
        let stamped = meta?[MCPProtocol.Meta.protocolVersion] != nil
        if kind == .undecided {
            if method != MCPProtocol.Method.initialize, stamped,
                let version = meta?[MCPProtocol.Meta.protocolVersion]?.stringValue,
                MCPProtocol.modernVersions.contains(version)
            {
                kind = .modern(version: version)
            } else if method != MCPProtocol.Method.initialize, stamped {
                // Stamped, but not with a version spoken here: refused, and
                // the next request decides.
                return Self.ladder(meta) ?? .refuse(Self.unsupported(meta?[MCPProtocol.Meta.protocolVersion]))
            } else {
                kind = .handshake
            }
        }
        switch kind {
        case .undecided, .handshake:
            if Self.modernOnly.contains(method) { return .refuse(.methodNotFound(method)) }
            if stamped, method != MCPProtocol.Method.initialize {
                return .refuse(
                    .invalidRequest(
                        "this session began with initialize (the 2025-11-25 era); a request stamped with "
                            + "\(MCPProtocol.Meta.protocolVersion) belongs to a new session"))
            }
            return .proceed(params)
        case .modern:
            if method == MCPProtocol.Method.initialize {
                return .refuse(Self.unsupported(params?["protocolVersion"]))
            }
            if let refusal = Self.ladder(meta) { return refusal }
            if MCPProtocol.Method.removedInModernEra.contains(method) {
                return .refuse(
                    ResponseError(
                        .methodNotFound, "Method not found: \(method) (removed in \(MCPProtocol.modernVersions[0]))",
                        data: .string(method)))
            }
            if method == MCPProtocol.Method.subscriptionsListen, case .object(var members) = params ?? .object([:]) {
                var stamp = members["_meta"]?.objectValue ?? [:]
                stamp[MCPProtocol.Meta.subscriptionID] = id.json
                members["_meta"] = .object(stamp)
                return .proceed(.object(members))
            }
            return .proceed(params)
        }
    }

    /// The envelope's checks: nil when it is whole and its version spoken.
    private static func ladder(_ meta: JSONValue?) -> Screening? {
        guard let members = meta?.objectValue else {
            return .refuse(
                .invalidParams(
                    "a request of the \(MCPProtocol.modernVersions[0]) era carries params._meta with "
                        + "\(MCPProtocol.Meta.protocolVersion) and \(MCPProtocol.Meta.clientCapabilities)",
                    field: "_meta"))
        }
        let missing = [MCPProtocol.Meta.protocolVersion, MCPProtocol.Meta.clientCapabilities].filter {
            members[$0] == nil
        }
        if !missing.isEmpty {
            return .refuse(
                .invalidParams("missing \(missing.joined(separator: " and "))", field: "_meta"))
        }
        guard let version = members[MCPProtocol.Meta.protocolVersion]?.stringValue else {
            return .refuse(
                .invalidParams("not a string", field: "_meta.\(MCPProtocol.Meta.protocolVersion)"))
        }
        if !MCPProtocol.modernVersions.contains(version) { return .refuse(unsupported(.string(version))) }
        return nil
    }

    /// -32022: the versions spoken, and the one asked for.
    static func unsupported(_ requested: JSONValue?) -> ResponseError {
        let shown = requested?.stringValue ?? requested?.description ?? "none"
        return ResponseError(
            ErrorCode(rawValue: MCPProtocol.ModernError.unsupportedProtocolVersion),
            "Unsupported protocol version: \(shown); this session speaks \(MCPProtocol.modernVersions.joined(separator: ", "))",
            data: [
                "supported": .array(MCPProtocol.modernVersions.map { .string($0) }),
                "requested": requested ?? .null,
            ])
    }
}
