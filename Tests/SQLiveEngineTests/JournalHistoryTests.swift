import Testing

@testable import SQLiveEngine

/// The states between two readings of a rollback-journal file, resolved
/// from the commits' journals alone: hand-made journals and pages, no
/// database (`JournalHistory`).
@Suite("Rollback journals: the states between two readings")
struct JournalHistoryTests {
    static let pageSize = 1024

    static func word(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// A page of `fill` bytes.
    static func page(_ fill: UInt8) -> [UInt8] { [UInt8](repeating: fill, count: pageSize) }

    /// Page 1 with a change counter, a schema cookie and a free list
    /// (first trunk, count).
    static func first(counter: UInt32, cookie: UInt32 = 3, trunk: UInt32 = 0, freeCount: UInt32 = 0) -> [UInt8] {
        var bytes = page(0)
        bytes.replaceSubrange(24..<28, with: word(counter))
        bytes.replaceSubrange(32..<36, with: word(trunk))
        bytes.replaceSubrange(36..<40, with: word(freeCount))
        bytes.replaceSubrange(40..<44, with: word(cookie))
        return bytes
    }

    /// A free-list trunk page listing `leaves`.
    static func trunk(next: UInt32 = 0, leaves: [UInt32]) -> [UInt8] {
        var bytes = word(next) + word(UInt32(leaves.count)) + leaves.flatMap(word)
        bytes += [UInt8](repeating: 0, count: pageSize - bytes.count)
        return bytes
    }

    /// A journal as SQLite writes it, with each record's checksum
    /// (`nonce` plus every 200th byte from the page's end).
    static func journal(_ records: [(UInt32, [UInt8])], original: UInt32, nonce: UInt32 = 0x1234_5678) -> [UInt8] {
        var bytes =
            JournalPages.magic + word(UInt32(records.count)) + word(nonce) + word(original) + word(512)
            + word(UInt32(pageSize))
        bytes += [UInt8](repeating: 0, count: 512 - bytes.count)
        for (number, content) in records {
            var sum = nonce
            var index = pageSize - 200
            while index > 0 {
                sum &+= UInt32(content[index])
                index -= 200
            }
            bytes += word(number) + content + word(sum)
        }
        return bytes
    }

    static func parsed(_ records: [(UInt32, [UInt8])], original: UInt32) throws -> JournalPages {
        try #require(JournalPages.parse(journal(records, original: original)))
    }

    static func history(
        _ journals: [JournalPages], currentPageCount: UInt32, initial: [UInt32: [UInt8]] = [:],
        current: [UInt32: [UInt8]]
    ) throws -> JournalHistory {
        try JournalHistory(
            journals: journals, pageSize: pageSize, usable: pageSize, cookie: 3, currentPageCount: currentPageCount,
            initial: { initial[$0] }, current: { current[$0] })
    }

    @Test("A journal keeps each saved page's first image when every checksum holds, none when one does not")
    func images() throws {
        let journal = Self.journal([(1, Self.first(counter: 7)), (4, Self.page(4)), (4, Self.page(9))], original: 6)
        let parsed = try #require(JournalPages.parse(journal))
        #expect(parsed.image(of: 4).map(Array.init) == Self.page(4))
        #expect(parsed.image(of: 1).map(Array.init) == Self.first(counter: 7))
        #expect(parsed.image(of: 5) == nil)
        var broken = journal
        broken[512 + 4 + 1024 + 4 + 4 + 824] ^= 1  // a sampled byte of page 4's record
        let unchecked = try #require(JournalPages.parse(broken))
        #expect(unchecked.pages == [1, 4])
        #expect(unchecked.images == nil)
    }

    @Test("Each state's page: the first later journal's image, else the current file's")
    func resolvesThroughJournals() throws {
        // Commit 1 wrote pages 1 and 5; commit 2 wrote 1, 5 and 6.
        let first = try Self.parsed([(1, Self.first(counter: 10)), (5, Self.page(50))], original: 8)
        let second = try Self.parsed(
            [(1, Self.first(counter: 11)), (5, Self.page(51)), (6, Self.page(60))], original: 8)
        let history = try Self.history(
            [first, second], currentPageCount: 9,
            current: [5: Self.page(52), 6: Self.page(61), 7: Self.page(70), 9: Self.page(90)])
        #expect(try history.page(5, at: 0).get() == Self.page(50))
        #expect(try history.page(5, at: 1).get() == Self.page(51))
        #expect(try history.page(5, at: 2).get() == Self.page(52))
        #expect(try history.page(6, at: 0).get() == Self.page(60))
        #expect(try history.page(6, at: 1).get() == Self.page(60))
        #expect(try history.page(7, at: 0).get() == Self.page(70))
        // Page 9 was appended by commit 2: not in the states before it.
        #expect(try history.page(9, at: 2).get() == Self.page(90))
        #expect(throws: JournalHistory.Unprovable.self) { try history.page(9, at: 1).get() }
    }

    @Test("A page freed unwritten and reused unsaved: the copy's while no commit before wrote it, else unknown")
    func freedAndReused() throws {
        // Commit 1 frees page 7 without writing it (secure_delete off): it
        // becomes a leaf of trunk 3. Commit 2 reuses it with no content
        // read, so it saves no image of it.
        let first = try Self.parsed(
            [(1, Self.first(counter: 10)), (3, Self.page(30)), (4, Self.page(40))], original: 8)
        let second = try Self.parsed(
            [(1, Self.first(counter: 11, trunk: 3, freeCount: 2)), (3, Self.trunk(leaves: [7]))], original: 8)
        let history = try Self.history(
            [first, second], currentPageCount: 8, initial: [7: Self.page(77)],
            current: [3: Self.page(31), 7: Self.page(78)])
        // State 1 (page 7 free): unknown from the journals; the copy has
        // it and commit 1 did not write it.
        #expect(try history.page(7, at: 1).get() == Self.page(77))
        #expect(try history.page(7, at: 0).get() == Self.page(77))
        #expect(try history.page(7, at: 2).get() == Self.page(78))
        // Without the copy's page, it is unknown, never the current one.
        let blind = try Self.history(
            [first, second], currentPageCount: 8, current: [3: Self.page(31), 7: Self.page(78)])
        #expect(throws: JournalHistory.Unprovable.self) { try blind.page(7, at: 1).get() }
        // Had commit 1 written it, the copy would not be it either.
        let written = try Self.parsed(
            [(1, Self.first(counter: 10)), (3, Self.page(30)), (7, Self.page(76))], original: 8)
        let lost = try Self.history(
            [written, second], currentPageCount: 8, initial: [7: Self.page(77)],
            current: [3: Self.page(31), 7: Self.page(78)])
        #expect(try lost.page(7, at: 0).get() == Self.page(76))
        #expect(throws: JournalHistory.Unprovable.self) { try lost.page(7, at: 1).get() }
    }

    @Test(
        "Refused whole: a schema change, auto-vacuum, a journal without page 1 or images, a free list that does not add up"
    )
    func refusals() throws {
        let plain = try Self.parsed([(1, Self.first(counter: 10))], original: 4)
        let otherCookie = try Self.parsed([(1, Self.first(counter: 11, cookie: 4))], original: 4)
        #expect(throws: JournalHistory.Unprovable.self) {
            try Self.history([plain, otherCookie], currentPageCount: 4, current: [:])
        }
        var vacuumed = Self.first(counter: 11)
        vacuumed.replaceSubrange(52..<56, with: Self.word(3))
        let autoVacuum = try Self.parsed([(1, vacuumed)], original: 4)
        #expect(throws: JournalHistory.Unprovable.self) {
            try Self.history([plain, autoVacuum], currentPageCount: 4, current: [:])
        }
        let noFirst = try Self.parsed([(2, Self.page(2))], original: 4)
        #expect(throws: JournalHistory.Unprovable.self) {
            try Self.history([plain, noFirst], currentPageCount: 4, current: [:])
        }
        var unchecked = plain
        unchecked.images = nil
        #expect(throws: JournalHistory.Unprovable.self) {
            try Self.history([unchecked, plain], currentPageCount: 4, current: [:])
        }
        // The header counts 3 free pages; the trunk lists one leaf.
        let miscounted = try Self.parsed(
            [(1, Self.first(counter: 11, trunk: 2, freeCount: 3)), (2, Self.trunk(leaves: [3]))], original: 4)
        #expect(throws: JournalHistory.Unprovable.self) {
            try Self.history([plain, miscounted], currentPageCount: 4, current: [:])
        }
        // And accepted when it adds up.
        let counted = try Self.parsed(
            [(1, Self.first(counter: 11, trunk: 2, freeCount: 2)), (2, Self.trunk(leaves: [3]))], original: 4)
        _ = try Self.history([plain, counted], currentPageCount: 4, current: [:])
    }
}
