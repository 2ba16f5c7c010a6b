import Foundation

/// A directory of its own for one test, removed when the value is released.
public final class TemporaryDirectory: Sendable {
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("sqlive-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of a file in the directory.
    public func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
