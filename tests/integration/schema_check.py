#!/usr/bin/env python3
"""schema_check.py - validate JSON Lines files against a JSON Schema
(draft 2020-12): every line of every file must be a JSON value the schema
accepts ("format" checked too: ipv4, ipv6, ...). Prints one line per failure (FILE:LINE: what), then, on stdout,
"kinds: K1 K2 ..." (the sorted values of the key --kinds-of names, when
given) so a test can check what it covered. Exit 0 when all lines pass,
1 when one does not, 2 when it cannot run (no jsonschema, a bad schema).

usage: schema_check.py SCHEMA [--kinds-of KEY] FILE..."""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("schema_check: python3-jsonschema is not installed", file=sys.stderr)
    sys.exit(2)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    v = cls(schema, format_checker=jsonschema.FormatChecker())
    args = argv[2:]
    key = None
    if len(args) >= 2 and args[0] == "--kinds-of":
        key, args = args[1], args[2:]
    bad = 0
    kinds = set()
    for path in args:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            for n, line in enumerate(f, 1):
                try:
                    obj = json.loads(line)
                except ValueError as e:
                    print(f"{path}:{n}: not JSON: {e}", file=sys.stderr)
                    bad += 1
                    continue
                if key and isinstance(obj, dict) and key in obj:
                    kinds.add(str(obj[key]))
                errs = sorted(v.iter_errors(obj), key=lambda e: list(e.absolute_path))
                for e in errs[:3]:
                    where = "/".join(str(p) for p in e.absolute_path) or "(line)"
                    print(f"{path}:{n}: {where}: {e.message[:300]}", file=sys.stderr)
                bad += bool(errs)
    if key:
        print("kinds: " + " ".join(sorted(kinds)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
