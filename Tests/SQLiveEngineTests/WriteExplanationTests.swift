import Testing

@testable import SQLiveEngine

@Suite("WriteExplanation: was a write to the file a commit's?")
struct WriteExplanationTests {
    typealias Writes = WriteExplanation<ManualInstant>

    @Test("A write a version change explains, before or within 50 ms after it, is a commit's")
    func explained() {
        var writes = Writes()
        func unchanged(_ ms: Int) -> Bool { writes.versionUnchanged(at: .ms(ms)) }
        writes.fileWasWritten(at: .ms(0))
        #expect(!unchanged(3))
        writes.versionDidChange(at: .ms(5))
        #expect(!unchanged(20))
        // The commit's own later writes (its other pages, a checkpoint).
        writes.fileWasWritten(at: .ms(40))
        #expect(!unchanged(45))
        #expect(!unchanged(48))
        #expect(writes.writtenAt == nil)
    }

    @Test("A write no version change explains, 8 ms on, is a change outside a commit, told once")
    func unexplained() {
        var writes = Writes()
        func unchanged(_ ms: Int) -> Bool { writes.versionUnchanged(at: .ms(ms)) }
        writes.fileWasWritten(at: .ms(100))
        #expect(!unchanged(107))
        #expect(unchanged(108))
        #expect(!unchanged(120))
        // Long after a commit: not that commit's.
        writes.versionDidChange(at: .ms(200))
        writes.fileWasWritten(at: .ms(251))
        #expect(unchanged(260))
    }
}
