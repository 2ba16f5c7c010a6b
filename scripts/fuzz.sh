#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer of the frame parser, the JSON-RPC
# message decoder, the dot-command parser and the input splitter.
#
#   scripts/fuzz.sh                 # every target, 15 s each
#   scripts/fuzz.sh 300             # every target, 300 s each
#   scripts/fuzz.sh 60 messages     # one target
#
# The targets are in Fuzz/Sources/sqlive-fuzz, built into .build-fuzz with
# libFuzzer and AddressSanitizer. Each runs on a temporary copy of its seed
# corpus (Fuzz/corpus/TARGET), so the committed corpus does not grow. A
# crash, trap or memory error fails the script, printing the input that
# caused it; turn it into a test, and add it to the seed corpus.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-15}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(frames messages dot-commands input)

# SwiftPM's --sanitize fuzzer links libFuzzer but does not instrument the
# Swift modules for coverage: -Xswiftc -sanitize=fuzzer does.
build=(--product sqlive-fuzz --scratch-path .build-fuzz --sanitize fuzzer --sanitize address -Xswiftc -sanitize=fuzzer)
start=$(date +%s)
SQLIVE_FUZZ=1 swift build "${build[@]}"
fuzzer="$(SQLIVE_FUZZ=1 swift build "${build[@]}" --show-bin-path)/sqlive-fuzz"
echo "== built in $(($(date +%s) - start)) s"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS="detect_leaks=0 ${ASAN_OPTIONS:-}"
# Swift's backtracer would take minutes over a crash in this large binary.
export SWIFT_BACKTRACE=enable=no
status=0
for target in "${targets[@]}"; do
    [ -d "Fuzz/corpus/$target" ] || { echo "no corpus for $target" >&2; exit 2; }
    cp -r "Fuzz/corpus/$target" "$work/$target"
    log="$work/$target.log"
    if SQLIVE_FUZZ_TARGET="$target" "$fuzzer" -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$work/$target-" -rss_limit_mb=4096 "$work/$target" >"$log" 2>&1; then
        executions=$(grep -o 'number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
        coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo "?")
        added=$(grep -o 'new_units_added: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
        echo "== $target: $executions executions in $seconds s, $coverage edges covered, $added new inputs, no crash"
    else
        status=1
        echo "== $target: FAILED" >&2
        grep -E 'ERROR|Fatal|panic|SUMMARY|Test unit written' "$log" | head -20 >&2 || tail -40 "$log" >&2
        for artifact in "$work/$target-"*; do
            [ -f "$artifact" ] || continue
            mkdir -p .build-fuzz/crashes && cp "$artifact" .build-fuzz/crashes/
            echo "input ($(basename "$artifact"), kept in .build-fuzz/crashes):" >&2
            xxd "$artifact" | head -20 >&2
        done
    fi
done
exit "$status"
