#!/usr/bin/env python3
"""logcheck.py - a session log's lines and hash chain, as t_audit.sh's
check_log asserts them: every line a JSON object with "v", "ts",
"session", "seq", "event" and "prev"; "session" the file's name (without
.jsonl); "seq" an integer, strictly increasing; "prev" of each line after
the first the SHA-256 (hex) of the line before it, without or with its
newline. One process for the whole file: the shell loop it replaces forked
a dozen programs a line, half a minute for a proxy test's log.

Prints one line per fault ("line N: ..."), nothing for a sound log; exit 0
either way, 2 when the file cannot be read.

usage: logcheck.py LOG"""
import hashlib
import json
import os
import sys


def faults(path):
    name = os.path.basename(path)
    session = name[:-len(".jsonl")] if name.endswith(".jsonl") else name
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    prev = None
    seqs = []
    for n, raw in enumerate(lines, 1):
        try:
            o = json.loads(raw)
        except ValueError as e:
            yield f"line {n}: not JSON ({e})"
            prev = raw
            continue
        if not isinstance(o, dict):
            yield f"line {n}: not a JSON object"
            prev = raw
            continue
        for k in ("v", "ts", "session", "seq", "event", "prev"):
            if k not in o:
                yield f'line {n} lacks "{k}"'
        if o.get("session") != session:
            yield f"line {n}: session is not the file name {session}"
        seq = o.get("seq")
        if isinstance(seq, int) and not isinstance(seq, bool):
            seqs.append(seq)
        else:
            yield f"line {n}: seq is not a number"
        if prev is not None:
            want = (hashlib.sha256(prev).hexdigest(), hashlib.sha256(prev + b"\n").hexdigest())
            if o.get("prev") not in want:
                yield f"line {n}: prev is not the SHA-256 of line {n - 1}"
        prev = raw
    if any(b <= a for a, b in zip(seqs, seqs[1:])):
        yield "seq not increasing: " + " ".join(map(str, seqs))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.rsplit("\n", 1)[-1])
    try:
        for fault in faults(sys.argv[1]):
            print(fault)
    except OSError as e:
        print(f"logcheck.py: {e}", file=sys.stderr)
        sys.exit(2)


main()
