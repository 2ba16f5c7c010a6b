import Testing

@testable import SQLiveEngine

@Suite("ProbeSchedule: when the watcher reads data_version")
struct ProbeScheduleTests {
    typealias Schedule = ProbeSchedule<ManualInstant>

    @Test("The follow-up offsets: a quarter millisecond to 4 ms, 1 ms to 8 ms, then doubling steps to about a second")
    func offsets() {
        let offsets = Schedule.followUpOffsets
        #expect(offsets.count == 49)
        #expect(offsets.prefix(3) == [.zero, .microseconds(250), .microseconds(500)])
        #expect(offsets[16] == .milliseconds(4))
        #expect(offsets[20] == .milliseconds(8))
        #expect(zip(offsets, offsets.dropFirst()).allSatisfy { $0 < $1 })
        #expect(offsets.last! <= .milliseconds(1024) && offsets.last! > .milliseconds(512))
    }

    @Test("Without events it polls; an event asks for a reading at once, then follows up; a new event restarts")
    func followUp() {
        var schedule = Schedule(pollInterval: .milliseconds(100), now: .ms(0))
        #expect(schedule.nextReading() == .ms(100))
        schedule.eventDidArrive(at: .ms(10))
        #expect(schedule.nextReading() == .ms(10))
        schedule.didRead(at: .ms(10), busy: false)
        #expect(schedule.nextReading() == ManualInstant(offset: .microseconds(10_250)))
        // Late readings skip the offsets already past.
        schedule.didRead(at: .ms(13), busy: false)
        #expect(schedule.nextReading() == ManualInstant(offset: .microseconds(13_250)))
        schedule.eventDidArrive(at: .ms(20))
        #expect(schedule.nextReading() == .ms(20))
        // After the last offset, back to polling.
        schedule.didRead(at: .ms(2_000), busy: false)
        #expect(schedule.nextReading() == .ms(2_100))
    }

    @Test("A busy reading is retried after busyRetry, whatever the follow-up says")
    func busy() {
        var schedule = Schedule(pollInterval: .seconds(2), busyRetry: .milliseconds(2), now: .ms(0))
        schedule.didRead(at: .ms(5), busy: true)
        #expect(schedule.nextReading() == .ms(7))
        schedule.didRead(at: .ms(7), busy: false)
        #expect(schedule.nextReading() == .ms(2_007))
    }
}
