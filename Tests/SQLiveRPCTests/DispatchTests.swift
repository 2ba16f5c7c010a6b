import SQLiveProtocol
import Testing

@testable import SQLiveRPC

/// The server's pure parts: the lifecycle, and the dispatcher's table.
@Suite("Dispatch")
struct DispatchTests {
    @Test func lifecycle() {
        var lifecycle = Lifecycle()
        #expect(lifecycle.admit("query/execute")?.code == .serverNotInitialized)
        #expect(lifecycle.admit("shutdown")?.code == .serverNotInitialized)
        #expect(lifecycle.admit("initialize") == nil)
        #expect(lifecycle.admit("initialize")?.code == .invalidRequest)
        #expect(lifecycle.admit("query/execute") == nil)
        #expect(lifecycle.exitCode == 1)
        #expect(lifecycle.admit("shutdown") == nil)
        #expect(lifecycle.admit("query/execute")?.code == .invalidRequest)
        #expect(lifecycle.exitCode == 0)
    }

    @Test func everyRegisteredRequestIsServed() {
        #expect(Dispatcher.standard.methods == MessageRegistry.requests.map { $0.method })
        #expect(Set(Dispatcher.standard.methods).count == MessageRegistry.requests.count)
    }
}
