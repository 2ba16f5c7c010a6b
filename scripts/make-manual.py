#!/usr/bin/env python3
"""Writes the manual page sqlive(1), in roff, from the binary itself: its
options from the argument parser (`sqlive --experimental-dump-help`), its
dot-commands from the REPL's command table (`sqlive -c .help`), so that the
page cannot drift from the program.

    python3 scripts/make-manual.py /path/to/sqlive > sqlive.1
"""

import json
import subprocess
import sys


def roff(text: str) -> str:
    """Text escaped for roff: backslashes, and a leading dot or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def main() -> None:
    binary = sys.argv[1]
    info = json.loads(subprocess.run([binary, "--experimental-dump-help"], check=True, capture_output=True,
                                     text=True).stdout)["command"]
    version = subprocess.run([binary, "--sqlive-version"], check=True, capture_output=True, text=True).stdout.strip()
    dot_help = subprocess.run([binary, ":memory:", "-c", ".help"], check=True, capture_output=True,
                              text=True, env={"SQLIVE_QUIET": "1", "PATH": "/usr/bin:/bin"}).stdout

    out = []
    out.append(f'.TH SQLIVE 1 "" "sqlive {version}" "User Commands"')
    out.append(".SH NAME")
    out.append("sqlive \\- " + roff(info.get("abstract", "")))
    out.append(".SH SYNOPSIS")
    out.append(".B sqlive")
    out.append("[\\fIOPTIONS\\fR] [\\fIDATABASE\\fR [\\fISQL\\fR|\\fICMD\\fR...]]")
    out.append(".SH DESCRIPTION")
    out.append(roff(info.get("discussion", "").strip()))
    out.append(".PP")
    out.append(roff(
        "Live queries are re-printed whenever the data they read changes, whoever changed it: this "
        "session, another connection, or another process writing the same file. With --rpc or --lsp, "
        "sqlive is a JSON-RPC 2.0 server and a Language Server for SQL files; with --mcp, a Model "
        "Context Protocol server for AI assistants."))

    out.append(".SH OPTIONS")
    for argument in info.get("arguments", []):
        if argument.get("shouldDisplay") is False:
            continue
        names = argument.get("names") or []
        value = argument.get("valueName", "")
        if argument["kind"] == "positional":
            label = "\\fI" + roff(value.upper() or "DATABASE") + "\\fR"
        else:
            spelled = []
            for name in names:
                dashes = "\\-" if name["kind"] in ("short", "longWithSingleDash") else "\\-\\-"
                spelled.append("\\fB" + dashes + roff(name["name"]) + "\\fR")
            label = ", ".join(spelled)
            if argument["kind"] == "option":
                label += " \\fI" + roff(value.upper()) + "\\fR"
        out.append(".TP")
        out.append(label)
        text = argument.get("abstract", "")
        if argument.get("defaultValue") is not None and argument["kind"] == "option":
            text += f" (default: {argument['defaultValue']})"
        if argument.get("discussion"):
            text += "\n" + argument["discussion"]
        out.append(roff(text))
    out.append(".TP")
    out.append("\\fB\\-\\-generate\\-completion\\-script\\fR \\fIbash|zsh|fish\\fR")
    out.append("Print a shell completion script.")

    out.append(".SH DOT-COMMANDS")
    out.append(roff("In the REPL and in scripts (-c, -f, standard input), lines that start with a dot:"))
    for line in dot_help.splitlines():
        if not line.startswith("."):
            continue
        usage, _, text = line.partition("  ")
        out.append(".TP")
        out.append("\\fB" + roff(usage.strip()) + "\\fR")
        out.append(roff(text.strip()))

    out.append(".SH EXAMPLES")
    for command, text in [
        ("sqlive \\-\\-demo", "a live playground on a demo database that another connection keeps writing"),
        ("sqlive games.sqlite", "the interactive REPL"),
        ("sqlive games.sqlite \\-c \\(aq.mode csv\\(aq \\-c \\(aqSELECT * FROM players\\(aq",
         "a scripted session"),
        ("sqlive \\-\\-lsp games.sqlite", "the language server an editor starts for .sql files"),
        ("sqlive \\-\\-mcp games.sqlite", "the MCP server an AI assistant starts, read-only"),
        ("ssh host sqlive \\-\\-mcp /srv/app.sqlite", "a database on another machine, over ssh's standard input and output"),
    ]:
        out.append(".TP")
        out.append("\\fB" + command + "\\fR")
        out.append(roff(text))
    out.append(".SH EXIT STATUS")
    out.append(roff("0 on success; 1 when a scripted session's command failed, or on a usage error."))
    out.append(".SH SEE ALSO")
    out.append("\\fBsqlite3\\fR(1)")
    out.append(".SH LICENSE")
    out.append(roff(
        "The source code of sqlive is under the MIT licence. The sqlive binary links GNU readline, "
        "which is under the GPL (version 3 or later): the binary as a whole is covered by the GPL. "
        "See /usr/share/doc/sqlive/copyright."))
    print("\n".join(out))


if __name__ == "__main__":
    main()
