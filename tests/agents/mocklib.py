"""mocklib.py - what the mocks of the model APIs share (mock_anthropic.py,
mock_openai.py, beside this file): a JSON-lines log written under one lock,
ids unique to the run, and the record of the credentials each request
carried (for the secrets checks)."""
import json
import threading

LOCK = threading.Lock()
COUNTER = [0]


def log_line(path, obj):
    with LOCK:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(obj) + "\n")


def next_id(prefix):
    with LOCK:
        COUNTER[0] += 1
        return "%s_mock%06d" % (prefix, COUNTER[0])


def record_keys(path, headers, names):
    """Append each credential header among names, as received, to path."""
    if not path:
        return
    with LOCK:
        with open(path, "a") as f:
            for k in names:
                if headers.get(k):
                    f.write("%s: %s\n" % (k, headers.get(k)))
