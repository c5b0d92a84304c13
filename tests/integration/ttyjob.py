#!/usr/bin/env python3
"""ttyjob.py - a terminal for the tests that a user types at: job control
(Ctrl-Z, `fg`) in an interactive shell, and what reaches the screen, byte
for byte.

  ttyjob.py COMMAND STEP...
      Runs sh -c COMMAND on a pty of its own (its controlling terminal, in
      its foreground; COMMAND may be `bash -i`, a shell with job control)
      and takes the steps in order:
        expect=RE  waits (20 s at most) for the Python regular expression RE
                   in what the terminal shows after the previous expect's
                   match (bytes, DOTALL);
        send=TEXT  types TEXT, with Python's escapes (\\x1a is Ctrl-Z, \\r
                   Enter);
        sleep=S    reads on for S seconds;
        run=CMD    runs sh -c CMD beside it (from another terminal, as it
                   were) and shows its output and status on stdout.
      Then reads until the command ends (20 s at most) and prints
      "screen: " and all it showed as a Python bytes literal, and "rc=N";
      or, when an expect timed out, "failed: STEP" before them.
"""
import codecs
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time


def read_some(fd, out, wait):
    """Reads what comes within wait seconds into out; False at the end."""
    r, _, _ = select.select([fd], [], [], wait)
    if not r:
        return True
    try:
        b = os.read(fd, 65536)
    except OSError:  # EIO: the last process of the terminal closed it
        return False
    out += b
    return bool(b)


def expect(fd, out, start, rx):
    """The end of rx's first match in out past start, or -1 after 20 s."""
    end = time.monotonic() + 20
    pat = re.compile(rx.encode(), re.DOTALL)
    while True:
        m = pat.search(bytes(out), start)
        if m:
            return m.end()
        if time.monotonic() > end or not read_some(fd, out, 0.1):
            m = pat.search(bytes(out), start)
            return m.end() if m else -1


def side(cmd):
    s = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, timeout=30)
    sys.stdout.write(s.stdout + s.stderr)
    print("run rc=%d" % s.returncode)


def step(fd, out, pos, st):
    """Takes one step; the new position in out, or -1 when it failed."""
    kind, _, arg = st.partition("=")
    if kind == "expect":
        return expect(fd, out, pos, arg)
    if kind == "send":
        os.write(fd, codecs.decode(arg, "unicode_escape").encode("latin-1"))
    elif kind == "sleep":
        end = time.monotonic() + float(arg)
        while time.monotonic() < end and read_some(fd, out, end - time.monotonic()):
            pass
    elif kind == "run":
        side(arg)
    else:
        sys.exit("ttyjob.py: unknown step " + st)
    return pos


def finish(pid, fd, out):
    """Reads until the command ends (killed after 20 s): its status."""
    end = time.monotonic() + 20
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            while read_some(fd, out, 0.2):
                pass
            return status
        if time.monotonic() > end:
            os.kill(pid, signal.SIGKILL)
            return os.waitpid(pid, 0)[1]
        read_some(fd, out, 0.2)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("sh", ["sh", "-c", sys.argv[1]])
    out = bytearray()
    pos = 0
    for st in sys.argv[2:]:
        pos = step(fd, out, pos, st)
        if pos < 0:
            print("failed: " + st)
            break
    status = finish(pid, fd, out)
    print("screen: %r" % bytes(out))
    print("rc=%d" % os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
