import Foundation
import Testing

@testable import SQLiveProtocol

/// A message's envelope, decoded from its JSON text as the server reads it.
func decodeMessage(_ json: JSONValue) throws -> IncomingMessage {
    let content = try IncomingContent.decode(JSONCoding.encode(json))
    guard case .message(let message) = content else {
        Issue.record("\(json) decoded as a batch")
        return .invalid(id: nil, error: .invalidRequest("a batch"))
    }
    return message
}

/// A message the server sends, as the client reads it.
func written(_ message: OutgoingMessage) throws -> JSONValue {
    let text = try message.encoded()
    return try JSONCoding.decode(JSONValue.self, from: text)
}

@Suite("Messages")
struct MessageTests {
    @Test func requestsAndNotifications() throws {
        #expect(
            try decodeMessage(["jsonrpc": "2.0", "id": 1, "method": "initialize", "params": [:]])
                == .request(id: .number(1), method: "initialize", params: [:]))
        #expect(
            try decodeMessage(["jsonrpc": "2.0", "id": "abc", "method": "shutdown"])
                == .request(id: .string("abc"), method: "shutdown", params: nil))
        #expect(
            try decodeMessage(["jsonrpc": "2.0", "method": "exit"]) == .notification(method: "exit", params: nil))
        #expect(try decodeMessage(["jsonrpc": "2.0", "id": 3, "result": nil]) == .response(id: .number(3)))
    }

    @Test func idsAreKeptForErrors() throws {
        guard case .invalid(let id, let error) = try decodeMessage(["jsonrpc": "1.0", "id": 7, "method": "x"])
        else {
            Issue.record("expected an invalid message")
            return
        }
        #expect(id == .number(7))
        #expect(error.code == .invalidRequest)

        guard case .invalid(let id2, let error2) = try decodeMessage(["jsonrpc": "2.0", "id": "s", "method": 5])
        else {
            Issue.record("expected an invalid message")
            return
        }
        #expect(id2 == .string("s"))
        #expect(error2.code == .invalidRequest)
    }

    @Test(arguments: [
        JSONValue.integer(5), "text", nil, ["jsonrpc": "2.0"], ["jsonrpc": "2.0", "id": 1.5, "method": "x"],
        ["jsonrpc": "2.0", "id": [1], "method": "x"], ["jsonrpc": "2.0", "id": nil, "method": "x"],
        ["jsonrpc": "2.0", "id": 1, "method": "x", "result": 1],
        ["jsonrpc": "2.0", "id": 1, "result": 1, "error": [:]],
        ["method": "x", "id": 1], ["jsonrpc": 2, "method": "x"],
    ])
    func invalidMessages(message: JSONValue) throws {
        guard case .invalid(_, let error) = try decodeMessage(message) else {
            Issue.record("\(message) should be invalid")
            return
        }
        #expect(error.code == .invalidRequest)
    }

    @Test func anEmptyBatchIsABatch() throws {
        #expect(try IncomingContent.decode(Array("[]".utf8)) == .batch([]))
        let batch = try IncomingContent.decode(Array(#"[{"jsonrpc":"2.0","method":"exit"}, 5]"#.utf8))
        guard case .batch(let messages) = batch, messages.count == 2, case .invalid = messages[1] else {
            Issue.record("\(batch)")
            return
        }
        #expect(messages[0] == .notification(method: "exit", params: nil))
    }

    @Test func responsesAreWellFormed() throws {
        let success = try written(OutgoingMessage.response(id: .string("a"), result: ["x": 1] as JSONValue))
        #expect(success == ["jsonrpc": "2.0", "id": "a", "result": ["x": 1]])
        let failure = try written(OutgoingMessage.response(id: nil, error: .parseError("bad")))
        #expect(failure["id"] == .null)
        #expect(failure["error"]?["code"] == -32700)
        #expect(failure["result"] == nil)
        let empty = try OutgoingMessage.response(id: .number(1), result: EmptyResult()).encoded()
        #expect(String(decoding: empty, as: UTF8.self) == #"{"id":1,"jsonrpc":"2.0","result":{}}"#)
        let null = try OutgoingMessage.response(id: .number(2), result: NullResult()).encoded()
        #expect(String(decoding: null, as: UTF8.self) == #"{"id":2,"jsonrpc":"2.0","result":null}"#)
        let batch = try written(.batch([.response(id: .number(3), result: EmptyResult())]))
        #expect(batch == [["jsonrpc": "2.0", "id": 3, "result": [:]]])
    }

    @Test func requestIDsRoundTripExactly() throws {
        let ids: [RequestID] = [
            .number(Int64.max), .number(Int64.min), .number(-1), .number(0), .string(""), .string("é 🎉"),
        ]
        for id in ids {
            // The id as the client wrote it comes back as it was written.
            let request = try decodeMessage(["jsonrpc": "2.0", "id": id.json, "method": "shutdown"])
            #expect(request == .request(id: id, method: "shutdown", params: nil))
            let text = try OutgoingMessage.response(id: id, result: JSONValue.null).encoded()
            let idText = String(decoding: try JSONCoding.encode(id.json), as: UTF8.self)
            #expect(String(decoding: text, as: UTF8.self) == #"{"id":\#(idText),"jsonrpc":"2.0","result":null}"#)
            #expect(try written(OutgoingMessage.response(id: id, result: JSONValue.null))["id"] == id.json)
        }
    }
}

@Suite("Value encoding")
struct ValueEncodingTests {
    @Test func sqlValuesAsJSON() throws {
        #expect(RPCValue.null.json == .null)
        #expect(RPCValue.integer(Int64.max).json == .integer(Int64.max))
        #expect(RPCValue.integer(Int64.min).json == .integer(Int64.min))
        #expect(RPCValue.real(1).json == .double(1))
        #expect(RPCValue.text("é").json == "é")
        #expect(RPCValue.blob(Data([0, 255])).json == ["$blob": "AP8="])
        let text = String(decoding: try JSONCoding.encode(RPCValue.integer(Int64.max)), as: UTF8.self)
        #expect(text == "9223372036854775807")
        // The known loss: an integral REAL is written without its `.0`.
        #expect(String(decoding: try JSONCoding.encode(RPCValue.real(2)), as: UTF8.self) == "2")
        #expect(String(decoding: try JSONCoding.encode(RPCValue.real(2.5)), as: UTF8.self) == "2.5")
        // JSON has no infinities: they are written as strings.
        #expect(String(decoding: try JSONCoding.encode(RPCValue.real(-.infinity)), as: UTF8.self) == #""-Infinity""#)
    }

    @Test func jsonAsSQLValues() throws {
        #expect(try RPCValue(json: nil) == .null)
        #expect(try RPCValue(json: true) == .integer(1))
        #expect(try RPCValue(json: .integer(Int64.min)) == .integer(Int64.min))
        #expect(try RPCValue(json: 1.0) == .real(1))
        #expect(try RPCValue(json: "x") == .text("x"))
        #expect(try RPCValue(json: ["$blob": "AP8="]) == .blob(Data([0, 255])))
        #expect(throws: DescribedError.self) { try RPCValue(json: ["$blob": "not base64!"]) }
        #expect(throws: DescribedError.self) { try RPCValue(json: ["other": 1]) }
        #expect(throws: DescribedError.self) { try RPCValue(json: [1]) }
    }

    @Test func parameters() throws {
        let positional = try JSONCoding.decode(RPCParameters.self, from: [1, "a", nil, 2.5, .integer(Int64.min)])
        #expect(
            positional == .positional([.integer(1), .text("a"), .null, .real(2.5), .integer(Int64.min)]))
        let named = try JSONCoding.decode(RPCParameters.self, from: [":a": 1, "@b": 2, "$c": 3, "d": 4])
        #expect(named == .named(["a": .integer(1), "b": .integer(2), "c": .integer(3), "d": .integer(4)]))
        let error = #expect(throws: DecodingError.self) {
            try JSONCoding.decode(QueryExecuteRequest.Params.self, from: ["sql": "x", "params": [1, [2]]])
        }
        let response = ResponseError(decoding: error!)
        #expect(response.data == ["field": "params[1]"])
        #expect(response.message.contains("found an array"))
    }
}

@Suite("Params keep the kinds the client wrote")
struct ParamKindTests {
    /// query/execute's fast path reads what `Decodable` reads, and leaves
    /// the rest (and every error) to it.
    @Test(arguments: [
        #"{"sql": "SELECT 1"}"#,
        #"{"sql": "SELECT ?, ?", "params": [1, "a"], "maxRows": 5}"#,
        #"{"sql": "SELECT ?", "params": [{"$blob": "AAE="}], "maxRows": null, "other": 3}"#,
        #"{"sql": "SELECT ?", "params": [true, null, 1.5], "maxRows": 0}"#,
        #"{"sql": "SELECT :a", "params": {":a": 1}}"#,
        #"{"sql": "SELECT 1", "maxRows": 2.0}"#,
        #"{"sql": "SELECT 1", "params": null}"#,
    ])
    func queryParamsFastPathAgreesWithDecodable(_ text: String) throws {
        let json = try JSONReader.parse(text)
        let decoded = try JSONCoding.decode(QueryExecuteRequest.Params.self, from: json)
        let read = try QueryExecuteRequest.decodeParams(from: json)
        #expect(read.sql == decoded.sql)
        #expect(read.params == decoded.params)
        #expect(read.maxRows == decoded.maxRows)
        if let fast = QueryExecuteRequest.Params(json: json) {
            #expect(fast.sql == decoded.sql && fast.params == decoded.params && fast.maxRows == decoded.maxRows)
        }
    }

    @Test(arguments: [
        #"{"sql": 1}"#,
        #"{"params": [1]}"#,
        #"{"sql": "SELECT ?", "params": [[1]]}"#,
        #"{"sql": "SELECT ?", "params": [{"$blob": "%%"}]}"#,
        #"{"sql": "SELECT 1", "maxRows": "5"}"#,
        #"{"sql": "SELECT 1", "maxRows": 1.5}"#,
        #"{"sql": "SELECT 1", "params": 3}"#,
        #"[1]"#,
    ])
    func queryParamsErrorsComeFromDecodable(_ text: String) throws {
        let json = try JSONReader.parse(text)
        #expect(QueryExecuteRequest.Params(json: json) == nil)
        let expected = try #require(throws: DecodingError.self) {
            try JSONCoding.decode(QueryExecuteRequest.Params.self, from: json)
        }
        let error = try #require(throws: DecodingError.self) {
            try QueryExecuteRequest.decodeParams(from: json)
        }
        #expect("\(error)" == "\(expected)")
    }

    @Test func doublesWrittenWithAFractionStayReal() throws {
        let text = Array(#"{"sql": "SELECT ?, ?, ?", "params": [3.0, 1e2, 3]}"#.utf8)
        let params = try JSONCoding.decode(QueryExecuteRequest.Params.self, from: text)
        #expect(params.params == .positional([.real(3), .real(100), .integer(3)]))
        let named = try JSONCoding.decode(
            QueryExecuteRequest.Params.self, from: Array(#"{"sql": "SELECT :a", "params": {":a": 2.0}}"#.utf8))
        #expect(named.params == .named(["a": .real(2)]))
    }
}

@Suite("Messages over the maximum length")
struct OversizedMessageTests {
    @Test("A response longer than the maximum becomes a -32013 error for its request; a notification is dropped")
    func oversized() throws {
        // Control characters: six bytes each once escaped, more than any weighing of the value guessed.
        let text = String(repeating: "\u{1}", count: 2_000)
        var problems: [String] = []
        let response = OutgoingMessage.response(id: .number(7), result: ["value": text])
        let replaced = try #require(response.encoded(maximumLength: 4_000) { problems.append($0) })
        let json = try JSONReader.parse(replaced)
        #expect(json["id"] == 7)
        #expect(json["error"]?["code"] == -32013)
        #expect(json["error"]?["message"]?.stringValue?.contains("more than the 4000") == true)
        let notification = OutgoingMessage.notification(method: "liveQuery/changed", params: ["value": text])
        #expect(notification.encoded(maximumLength: 4_000) { problems.append($0) } == nil)
        #expect(problems.count == 2)
        let small = OutgoingMessage.response(id: .number(8), result: ["value": "ok"])
        #expect(try small.encoded(maximumLength: 4_000) { problems.append($0) } == small.encoded())
    }
}
