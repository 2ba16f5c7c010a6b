/// The `ExternalCommitResolver`'s decisions, as a pure value over an
/// instant type: the questions waiting for the session's connection, one
/// per database, and what to do when a change arrives, an answer comes, or
/// the patience timer looks.
///
/// - **A change arrives.** With no question waiting for its database: ask
///   one. With one waiting: fold the change into it; once the question has
///   waited past the patience, the change is external at once.
/// - **An answer comes.** External: emit, covering the folded changes too.
///   Not external, with changes folded meanwhile: ask again for them (the
///   answer covers only what happened before it was read), the patience
///   starting over. Otherwise nothing to tell.
/// - **The timer looks.** Answered, or asked again by another chain: done.
///   Not due yet: look again at the due time. Due while a commit of the
///   session is in flight (SQLite committed, GRDB has not told the
///   recorder yet: a writer thread descheduled on a loaded machine): that
///   commit explains the change and its answer is moments away, so look
///   again soon, for up to `commitGrace`. Due otherwise: the session is
///   busy, so emit the question's changes as external now, and take later
///   ones as external at once until the answer comes.
///
/// Tested with a manual instant (`CommitQuestionsTests`); the resolver
/// does the asking and the sleeping.
struct CommitQuestions<Instant: InstantProtocol> where Instant.Duration == Duration {
    let patience: Duration

    /// A question waiting for the session's connection.
    private struct Question {
        /// The first question and those asked again after it share one.
        var chain: Int
        /// When it was (last) asked.
        var askedAt: Instant
        /// It waited past `patience`: ambiguous changes are external at once.
        var timedOut = false
        /// The tables of the changes it asks about; `nil` when one is unknown.
        var tables: Set<String>?
        /// The tables of the changes that arrived while it waited
        /// (`.some(nil)`: one is unknown); `nil` when none did.
        var folded: Set<String>??

        mutating func fold(_ other: Set<String>?) {
            switch folded {
            case .none: folded = .some(other)
            case .some(let current): folded = .some(CommitQuestions.union(current, other))
            }
        }

        /// The tables of the question's changes and of those folded into it.
        var covered: Set<String>? {
            folded.map { CommitQuestions.union(tables, $0) } ?? tables
        }
    }

    // Invariant: at most one question per database; chains only grow.
    private var waiting: [String: Question] = [:]
    private var chains = 0

    init(patience: Duration) {
        self.patience = patience
    }

    /// What to do about an ambiguous change.
    enum Arrival: Equatable {
        /// Ask the session's connection, and start the timer of this chain.
        case ask(chain: Int)
        /// Folded into the question that waits.
        case folded
        /// External at once: the question waiting timed out.
        case external(Set<String>?)
    }

    mutating func changeArrived(_ schema: String, tables: Set<String>?, at now: Instant) -> Arrival {
        guard let current = waiting[schema] else {
            chains += 1
            waiting[schema] = Question(chain: chains, askedAt: now, tables: tables)
            return .ask(chain: chains)
        }
        if current.timedOut { return .external(tables) }
        waiting[schema]?.fold(tables)
        return .folded
    }

    /// What to do with the session connection's answer.
    enum AfterAnswer: Equatable {
        /// Changes were folded meanwhile and none was external: ask again.
        case askAgain
        /// Tell these changes as external.
        case external(Set<String>?)
        /// Nothing to tell.
        case done
    }

    mutating func answered(_ schema: String, external: Bool, at now: Instant) -> AfterAnswer {
        guard let current = waiting[schema] else { return .done }
        if !external, !current.timedOut, let folded = current.folded {
            waiting[schema] = Question(chain: current.chain, askedAt: now, tables: folded)
            return .askAgain
        }
        waiting[schema] = nil
        // Folded changes are left here only with an external answer (a
        // timed-out question folds none, and emitted its own already).
        return external ? .external(current.covered) : .done
    }

    /// What the patience timer of a chain does when it looks.
    enum TimerStep: Equatable {
        case done
        /// Not due yet (or asked again): look again then.
        case wait(until: Instant)
        /// Waited too long: tell the changes as external now.
        case external(Set<String>?)
    }

    /// How long past the patience a question waits for a commit of the
    /// session that is in flight.
    static var commitGrace: Duration { .seconds(1) }

    mutating func timerFired(
        _ schema: String, chain: Int, commitInFlight: Bool = false, at now: Instant
    ) -> TimerStep {
        guard let current = waiting[schema], current.chain == chain, !current.timedOut else { return .done }
        let due = current.askedAt.advanced(by: patience)
        if now < due { return .wait(until: due) }
        if commitInFlight, now < due.advanced(by: Self.commitGrace) {
            return .wait(until: now.advanced(by: .milliseconds(2)))
        }
        waiting[schema]?.timedOut = true
        // The change told now covers the ones folded so far.
        waiting[schema]?.folded = nil
        waiting[schema]?.tables = []
        return .external(current.covered)
    }

    fileprivate static func union(_ first: Set<String>?, _ second: Set<String>?) -> Set<String>? {
        guard let first, let second else { return nil }
        return first.union(second)
    }
}
