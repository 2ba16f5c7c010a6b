import Testing

@testable import SQLiveEngine

/// The resolver's decisions over a manual instant: no connection, no sleeping.
@Suite("CommitQuestions: was this commit the session's?")
struct CommitQuestionsTests {
    typealias Questions = CommitQuestions<ManualInstant>

    /// The questions, driven by milliseconds (a class: the calls mutate them
    /// inside `#expect`).
    final class Driver {
        var questions = Questions(patience: .milliseconds(20))
        func arrive(_ schema: String, _ tables: Set<String>?, _ ms: Int) -> Questions.Arrival {
            questions.changeArrived(schema, tables: tables, at: .ms(ms))
        }
        func answer(_ schema: String, _ external: Bool, _ ms: Int) -> Questions.AfterAnswer {
            questions.answered(schema, external: external, at: .ms(ms))
        }
        func timer(_ schema: String, _ chain: Int, _ ms: Int) -> Questions.TimerStep {
            questions.timerFired(schema, chain: chain, at: .ms(ms))
        }
        /// The timer, with a commit of the session in flight.
        func timerInFlight(_ schema: String, _ chain: Int, _ ms: Int) -> Questions.TimerStep {
            questions.timerFired(schema, chain: chain, commitInFlight: true, at: .ms(ms))
        }
    }

    @Test("One question per database; later changes fold into it; a local answer with folds asks again")
    func foldAndAskAgain() {
        let questions = Driver()
        let (arrive, answer, timer) = (questions.arrive, questions.answer, questions.timer)
        #expect(arrive("main", ["a"], 0) == .ask(chain: 1))
        #expect(arrive("main", ["b"], 1) == .folded)
        #expect(arrive("other", ["c"], 1) == .ask(chain: 2))
        // The answer covers only what came before it was read: ask again for b.
        #expect(answer("main", false, 5) == .askAgain)
        // The patience starts over from the question asked again.
        #expect(timer("main", 1, 21) == .wait(until: .ms(25)))
        #expect(answer("main", false, 6) == .done)
        #expect(timer("main", 1, 25) == .done)
        // The database is free for a new question.
        #expect(arrive("main", nil, 30) == .ask(chain: 3))
    }

    @Test("An external answer covers the folded changes too; an unknown table makes the union unknown")
    func externalCoversFolds() {
        let questions = Driver()
        let (arrive, answer, timer) = (questions.arrive, questions.answer, questions.timer)
        _ = arrive("main", ["a"], 0)
        _ = arrive("main", ["b"], 1)
        #expect(answer("main", true, 2) == .external(["a", "b"]))
        _ = arrive("main", ["a"], 3)
        _ = arrive("main", nil, 4)
        #expect(answer("main", true, 5) == .external(nil))
    }

    @Test(
        "A busy session: the question times out, its changes are told at once, and so are later ones until the answer")
    func patience() {
        let questions = Driver()
        let (arrive, answer, timer) = (questions.arrive, questions.answer, questions.timer)
        #expect(arrive("main", ["a"], 0) == .ask(chain: 1))
        _ = arrive("main", ["b"], 10)
        #expect(timer("main", 1, 10) == .wait(until: .ms(20)))
        #expect(timer("main", 1, 20) == .external(["a", "b"]))
        #expect(timer("main", 1, 30) == .done)
        #expect(arrive("main", ["c"], 31) == .external(["c"]))
        // The late answer: what it covers was told already.
        #expect(answer("main", false, 40) == .done)
        #expect(arrive("main", ["d"], 41) == .ask(chain: 2))
    }

    @Test("Due while a commit of the session is in flight: the timer waits for it, up to the grace, then tells")
    func commitInFlight() {
        let questions = Driver()
        let (arrive, answer, timer, timerInFlight) = (
            questions.arrive, questions.answer, questions.timer, questions.timerInFlight
        )
        #expect(arrive("main", ["a"], 0) == .ask(chain: 1))
        #expect(timerInFlight("main", 1, 25) == .wait(until: .ms(27)))
        // The commit settled and the session answered: its own.
        #expect(answer("main", false, 30) == .done)
        #expect(timer("main", 1, 31) == .done)
        // Still in flight after the grace: told as external.
        #expect(arrive("main", ["b"], 100) == .ask(chain: 2))
        #expect(timerInFlight("main", 2, 1_120) == .external(["b"]))
    }
}
