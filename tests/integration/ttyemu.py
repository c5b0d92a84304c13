#!/usr/bin/env python3
"""ttyemu.py - a terminal for the tests: the answers it owes, and what the
shell after a command reads of them.

  ttyemu.py run SHELL-COMMAND
      Runs sh -c SHELL-COMMAND on a pty of its own (its controlling
      terminal, the command in its foreground) and answers, in order, as a
      terminal does, DELAY after each query it reads in the output: device
      attributes (ESC [ c, ESC [ 0 c) with ESC [ ? 62 c, the cursor position
      (ESC [ 6 n) with ESC [ 9 ; 1 R, the background colour (ESC ] 11 ; ?)
      with ESC ] 11 ; rgb:0000/0000/0000 BEL. Everything the command wrote
      goes to stdout as it came; exits with the command's status.
  ttyemu.py read SECONDS
      On that terminal, after the command under test: what the terminal's
      input holds within SECONDS, read as a shell reads it (no line needed),
      printed as one line 'read:' and its bytes in Python's repr.
"""
import os
import pty
import re
import select
import sys
import termios
import time
import tty

# A terminal answers after it has drawn what came before: here long enough
# for the command to have ended (the answers to its last queries come
# after it), short enough for warden's wait for them at the end.
DELAY = 0.05
QUERIES = [
    (re.compile(rb"\x1b\[0?c"), b"\x1b[?62c"),
    (re.compile(rb"\x1b\[6n"), b"\x1b[9;1R"),
    (re.compile(rb"\x1b\]11;\?(\x07|\x1b\\)"), b"\x1b]11;rgb:0000/0000/0000\x07"),
]


def answers(buf, start):
    """The answers to the queries that end at or after start, in order."""
    found = []
    for rx, ans in QUERIES:
        for m in rx.finditer(buf):
            if m.end() > start:
                found.append((m.end(), ans))
    return [a for _, a in sorted(found)]


def run(cmd):
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("sh", ["sh", "-c", cmd])
    out = bytearray()
    seen = 0
    due = []  # (when, answer), in the order of the queries
    while True:
        wait = max(0.0, due[0][0] - time.monotonic()) if due else 1.0
        try:
            r, _, _ = select.select([fd], [], [], wait)
            while due and due[0][0] <= time.monotonic():
                os.write(fd, due.pop(0)[1])
            if not r:
                if not due and os.waitpid(pid, os.WNOHANG)[0]:
                    break
                continue
            data = os.read(fd, 4096)
        except OSError:  # EIO: the last process of the terminal closed it
            break
        if not data:
            break
        out += data
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        for ans in answers(bytes(out), seen):
            when = time.monotonic() + DELAY
            due.append((max(when, due[-1][0]) if due else when, ans))
        seen = len(out)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def read(seconds):
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setraw(fd, termios.TCSANOW)  # not TCSAFLUSH: what waits is the point
    got = bytearray()
    end = time.monotonic() + seconds
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                break
            got += os.read(fd, 4096)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    print("read:" + repr(bytes(got)), flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "run":
        sys.exit(run(sys.argv[2]))
    if len(sys.argv) == 3 and sys.argv[1] == "read":
        sys.exit(read(float(sys.argv[2])))
    sys.exit("usage: ttyemu.py run SHELL-COMMAND | read SECONDS")
