import Glibc
import SQLiveEngine

/// Nanoseconds on `CLOCK_MONOTONIC`: one clock for every process on the machine.
///
/// Writer processes report when each commit returned on this clock (Python's
/// `time.monotonic_ns()` reads it too), so latency is measured from the
/// commit, not from when sqlive noticed it.
enum Monotonic {
    static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}

/// CPU seconds used by this process so far (user + system).
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

/// Resident memory of this process, in MiB, from /proc/self/statm.
func residentMiB() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Double(fields[1]) else { return 0 }
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

/// The heap in use, in MiB (`ProcessMemory.heapInUse`).
func heapMiB() -> Double {
    Double(ProcessMemory.heapInUse) / 1_048_576
}
