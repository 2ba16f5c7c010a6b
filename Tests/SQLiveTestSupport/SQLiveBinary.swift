import Foundation

/// Finds the `sqlive` executable the tests run.
///
/// `SQLIVE_BIN` wins when set; otherwise the binary built next to the test
/// bundle; otherwise `swift build --show-bin-path` is asked, once.
public enum SQLiveBinary {
    public static let path: String = locate()

    /// The root of the package, from this file's path.
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private static func locate() -> String {
        if let path = ProcessInfo.processInfo.environment["SQLIVE_BIN"], !path.isEmpty {
            return path
        }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("sqlive").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        // Rare (the binary is beside the test bundle after `swift build`),
        // and blocking: see `Launcher.runBlocking`.
        let output = try? Launcher.runBlocking(
            "/usr/bin/env", ["swift", "build", "--package-path", packageRoot.path, "--show-bin-path"])
        let binPath = (output?.stdout ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        return URL(fileURLWithPath: binPath).appendingPathComponent("sqlive").path
    }
}
