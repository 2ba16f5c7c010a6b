/// The Model Context Protocol's messages that sqlive serves, as types: the
/// same `RequestType` and `NotificationType` shapes as the JSON-RPC
/// protocol's, so that one connection, dispatcher and request queue serve
/// both (one dispatcher per protocol).
///
/// Params are typed where sqlive reads them; results that carry JSON the
/// tools build (a tool's structured content, a resource's contents) are
/// `JSONValue`.
public enum MCPMessages {
    /// The requests, in the order `tools/list`-era clients use them.
    public static let requests: [any RequestType.Type] = [
        MCPInitializeRequest.self, MCPPingRequest.self, MCPToolsListRequest.self, MCPToolsCallRequest.self,
        MCPResourcesListRequest.self, MCPResourceTemplatesListRequest.self, MCPResourcesReadRequest.self,
        MCPResourcesSubscribeRequest.self, MCPResourcesUnsubscribeRequest.self, MCPServerDiscoverRequest.self,
        MCPSubscriptionsListenRequest.self,
    ]
}

/// `initialize`: `{protocolVersion, capabilities, clientInfo}`; the result
/// names the version negotiated, the server's capabilities and its
/// instructions.
public enum MCPInitializeRequest: RequestType {
    public static let method = MCPProtocol.Method.initialize

    public struct Params: Codable, Sendable {
        public var protocolVersion: String?
        public var capabilities: JSONValue?
        public var clientInfo: ClientInfo?

        public init(protocolVersion: String? = nil, capabilities: JSONValue? = nil, clientInfo: ClientInfo? = nil) {
            self.protocolVersion = protocolVersion
            self.capabilities = capabilities
            self.clientInfo = clientInfo
        }
    }

    public struct ClientInfo: Codable, Sendable {
        public var name: String?
        public var version: String?
    }

    public typealias Result = JSONValue
}

/// `ping`: `{}`.
public enum MCPPingRequest: RequestType {
    public static let method = MCPProtocol.Method.ping
    public typealias Params = EmptyParams
    public typealias Result = EmptyResult
}

/// A list request's params: MCP's pagination cursor (sqlive's lists fit
/// in one page, so it is read and ignored).
public struct MCPListParams: Codable, Sendable {
    public var cursor: String?

    public init(cursor: String? = nil) {
        self.cursor = cursor
    }
}

/// `tools/list`: `{tools}`.
public enum MCPToolsListRequest: RequestType {
    public static let method = MCPProtocol.Method.toolsList
    public typealias Params = MCPListParams

    public struct Result: Codable, Sendable {
        public var tools: JSONValue

        public init(tools: JSONValue) {
            self.tools = tools
        }
    }
}

/// `tools/call`: `{name, arguments}`; the result is MCP's `CallToolResult`
/// (`content`, `structuredContent`, `isError`): a tool's failure is a
/// result with `isError: true`, not a JSON-RPC error.
public enum MCPToolsCallRequest: RequestType {
    public static let method = MCPProtocol.Method.toolsCall

    public struct Params: Codable, Sendable {
        public var name: String
        /// The tool's arguments: an object, checked by the tool (anything
        /// else is a tool error, not a protocol one).
        public var arguments: JSONValue?

        public init(name: String, arguments: JSONValue? = nil) {
            self.name = name
            self.arguments = arguments
        }
    }

    public typealias Result = JSONValue
}

/// `resources/list`: `{resources}`.
public enum MCPResourcesListRequest: RequestType {
    public static let method = MCPProtocol.Method.resourcesList
    public typealias Params = MCPListParams

    public struct Result: Codable, Sendable {
        public var resources: [JSONValue]

        public init(resources: [JSONValue]) {
            self.resources = resources
        }
    }
}

/// `resources/templates/list`: `{resourceTemplates}`.
public enum MCPResourceTemplatesListRequest: RequestType {
    public static let method = MCPProtocol.Method.resourceTemplatesList
    public typealias Params = MCPListParams

    public struct Result: Codable, Sendable {
        public var resourceTemplates: [JSONValue]

        public init(resourceTemplates: [JSONValue]) {
            self.resourceTemplates = resourceTemplates
        }
    }
}

/// A resource request's params: `{uri}`.
public struct MCPResourceParams: Codable, Sendable {
    public var uri: String

    public init(uri: String) {
        self.uri = uri
    }
}

/// `resources/read`: `{contents}`.
public enum MCPResourcesReadRequest: RequestType {
    public static let method = MCPProtocol.Method.resourcesRead
    public typealias Params = MCPResourceParams
    public typealias Result = JSONValue
}

/// `resources/subscribe`: `{}`; the resource's changes then come as
/// `notifications/resources/updated`.
public enum MCPResourcesSubscribeRequest: RequestType {
    public static let method = MCPProtocol.Method.resourcesSubscribe
    public typealias Params = MCPResourceParams
    public typealias Result = EmptyResult
}

/// `resources/unsubscribe`: `{}`.
public enum MCPResourcesUnsubscribeRequest: RequestType {
    public static let method = MCPProtocol.Method.resourcesUnsubscribe
    public typealias Params = MCPResourceParams
    public typealias Result = EmptyResult
}

/// `server/discover` (the stateless era): `{supportedVersions,
/// capabilities, instructions, resultType, ttlMs, cacheScope}`.
public enum MCPServerDiscoverRequest: RequestType {
    public static let method = MCPProtocol.Method.serverDiscover
    public typealias Params = EmptyParams
    public typealias Result = JSONValue
}

/// `subscriptions/listen` (the stateless era): `{notifications:
/// {resourceSubscriptions, resourcesListChanged, toolsListChanged,
/// promptsListChanged}}`. Its first frame is
/// `notifications/subscriptions/acknowledged`; the change notifications
/// that follow carry its id in `_meta`; its result ends it.
public enum MCPSubscriptionsListenRequest: RequestType {
    public static let method = MCPProtocol.Method.subscriptionsListen

    public struct Params: Codable, Sendable {
        public var notifications: Filter?
        /// The request's `_meta`: the connection adds the listen's id
        /// (`io.modelcontextprotocol/subscriptionId`).
        public var _meta: JSONValue?

        public init(notifications: Filter? = nil, _meta: JSONValue? = nil) {
            self.notifications = notifications
            self._meta = _meta
        }
    }

    /// What the client asks to be told; every field is opt-in.
    public struct Filter: Codable, Sendable, Equatable {
        public var resourceSubscriptions: [String]?
        public var resourcesListChanged: Bool?
        public var toolsListChanged: Bool?
        public var promptsListChanged: Bool?

        public init(
            resourceSubscriptions: [String]? = nil, resourcesListChanged: Bool? = nil, toolsListChanged: Bool? = nil,
            promptsListChanged: Bool? = nil
        ) {
            self.resourceSubscriptions = resourceSubscriptions
            self.resourcesListChanged = resourcesListChanged
            self.toolsListChanged = toolsListChanged
            self.promptsListChanged = promptsListChanged
        }
    }

    public typealias Result = JSONValue
}

/// `notifications/initialized` (client): the handshake is over; the server
/// may notify from now on.
public enum MCPInitializedNotification: NotificationType {
    public static let method = MCPProtocol.Notification.initialized
    public typealias Params = EmptyParams
}

/// `notifications/cancelled` (client): `{requestId, reason?}`. The request
/// named is never answered; its statement is interrupted.
public enum MCPCancelledNotification: NotificationType {
    public static let method = MCPProtocol.Notification.cancelled

    public struct Params: Codable, Sendable {
        public var requestId: RequestID
        public var reason: String?

        public init(requestId: RequestID, reason: String? = nil) {
            self.requestId = requestId
            self.reason = reason
        }
    }
}

/// `notifications/resources/updated` (server): `{uri}`.
public enum MCPResourceUpdatedNotification: NotificationType {
    public static let method = MCPProtocol.Notification.resourceUpdated
    public typealias Params = MCPResourceParams
}

/// `notifications/resources/list_changed` (server): `{}`.
public enum MCPResourceListChangedNotification: NotificationType {
    public static let method = MCPProtocol.Notification.resourceListChanged
    public typealias Params = EmptyParams
}
