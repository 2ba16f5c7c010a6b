/// Parsing of the sqlite3 3.40.1 shell's diagnostic dot-commands: `.stats`,
/// `.log`, `.trace` in sqlite3's form (sqlive's `.trace on|profile|off`
/// keeps its words) and `.nonce`.
extension DotCommand {
    /// What `.trace ?OPTIONS? ?FILE?` asks, in sqlite3's form.
    public struct ShellTraceRequest: Hashable, Sendable {
        /// `stdout`, `stderr`, `off` or a path; `nil` keeps the current
        /// destination (sqlite3 then traces to it again, or not at all).
        public var file: String?
        /// `--stmt`, `--profile`, `--row`, `--close`; none is `--stmt`.
        public var events: ShellTraceEvents
        /// `--expanded` (true) or `--plain` (false); `nil` keeps the setting.
        public var expanded: Bool?

        public init(file: String? = nil, events: ShellTraceEvents = [], expanded: Bool? = nil) {
            self.file = file
            self.events = events
            self.expanded = expanded
        }
    }

    /// The events `.trace` asks SQLite for.
    public struct ShellTraceEvents: OptionSet, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let statement = ShellTraceEvents(rawValue: 1)
        public static let profile = ShellTraceEvents(rawValue: 2)
        public static let row = ShellTraceEvents(rawValue: 4)
        public static let close = ShellTraceEvents(rawValue: 8)
    }

    /// The command `name` of this family, or `nil` when `name` is another.
    static func parseDiagnostics(name: String, arguments: [String]) throws(ParseError) -> DotCommand? {
        switch name {
        case "stats":
            switch arguments.count {
            case 0: return .stats(nil)
            case 1:
                // As sqlite3 keeps it: a byte, 2 and 3 being stmt and vmstep.
                if arguments[0] == "stmt" { return .stats(2) }
                if arguments[0] == "vmstep" { return .stats(3) }
                let (value, warning) = booleanValue(arguments[0])
                let command = DotCommand.stats(UInt8(truncatingIfNeeded: value))
                return warning.map { .warning($0, then: command) } ?? command
            default:
                throw ParseError(description: "Usage: .stats ?on|off|stmt|vmstep?")
            }
        case "log":
            guard arguments.count == 1 else { throw ParseError(description: "Usage: .log FILENAME") }
            return .log(arguments[0])
        case "nonce":
            guard arguments.count == 1 else { throw ParseError(description: "Usage: .nonce NONCE") }
            return .nonce(arguments[0])
        case "trace":
            // sqlive's own words, alone.
            if arguments.count == 1, let mode = TraceMode(rawValue: arguments[0].lowercased()) {
                return .trace(mode)
            }
            var request = ShellTraceRequest()
            for argument in arguments {
                guard argument.hasPrefix("-") else {
                    request.file = argument
                    continue
                }
                let option = argument.hasPrefix("--") ? argument.dropFirst(2) : argument.dropFirst()
                switch option {
                case "expanded": request.expanded = true
                case "plain": request.expanded = false
                case "profile": request.events.insert(.profile)
                case "row": request.events.insert(.row)
                case "stmt": request.events.insert(.statement)
                case "close": request.events.insert(.close)
                default:
                    throw ParseError(description: "Unknown option \"\(argument)\" on \".trace\"", verbatim: true)
                }
            }
            return .shellTrace(request)
        default:
            return nil
        }
    }
}
