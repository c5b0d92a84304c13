#!/usr/bin/env python3
"""ttyrelay.py - a terminal for the tests that is slow to read or to be read:
what warden's relay between the user's terminal and the agent's pty does
when one side does not take what it is given.

  ttyrelay.py paste BYTES SHELL-COMMAND
      Runs sh -c SHELL-COMMAND on a pty of its own (its controlling
      terminal, in its foreground); once the command's output says
      "ready", types BYTES bytes at it (as a paste: as fast as the pty
      takes them), then reads the output to the end. Prints "typed N" (how
      many the pty took within 20 s), the output, and "rc=N".
  ttyrelay.py stall SECONDS SIDE-COMMAND SHELL-COMMAND
      The same, typing nothing: once the output says "ready", stops reading
      the terminal for SECONDS, then runs sh -c SIDE-COMMAND (from another
      terminal, as it were) and prints "side rc=N" and its output, then
      reads the rest and prints "rc=N".
  ttyrelay.py stall-gone SECONDS SIDE-COMMAND SHELL-COMMAND
      As stall, but the terminal never reads again after "ready": prints
      "exited after S s" (or "still running after S s") and "rc=N".
"""
import os
import pty
import select
import subprocess
import sys
import time


def spawn(cmd):
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("sh", ["sh", "-c", cmd])
    os.set_blocking(fd, False)
    return pid, fd


def read_some(fd, out, wait):
    r, _, _ = select.select([fd], [], [], wait)
    if not r:
        return True
    try:
        b = os.read(fd, 65536)
    except BlockingIOError:
        return True
    except OSError:
        return False  # EIO: the last writer of the pty is gone
    out += b
    return bool(b)


def until_ready(fd, out):
    end = time.monotonic() + 30
    while b"ready" not in out and time.monotonic() < end:
        if not read_some(fd, out, 0.1):
            break


def finish(pid, fd, out):
    while read_some(fd, out, 0.2):
        pass
    _, st = os.waitpid(pid, 0)
    sys.stdout.write(out.decode("utf-8", "replace"))
    print("\nrc=%d" % os.waitstatus_to_exitcode(st))


def paste(n, cmd):
    pid, fd = spawn(cmd)
    out = bytearray()
    until_ready(fd, out)
    data = bytes(ord("a") + i % 26 for i in range(n))
    typed = 0
    end = time.monotonic() + 20
    while typed < n and time.monotonic() < end:
        try:
            typed += os.write(fd, data[typed:typed + 4096])
        except BlockingIOError:
            read_some(fd, out, 0.01)
    print("typed %d" % typed)
    finish(pid, fd, out)


def side(cmd):
    s = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True)
    print("side rc=%d" % s.returncode)
    sys.stdout.write(s.stdout + s.stderr)


def stall(seconds, side_cmd, cmd, gone):
    pid, fd = spawn(cmd)
    out = bytearray()
    until_ready(fd, out)
    time.sleep(seconds)
    side(side_cmd)
    if not gone:
        finish(pid, fd, out)
        return
    t0 = time.monotonic()
    while time.monotonic() - t0 < 30:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            print("exited after %.1f s" % (time.monotonic() - t0))
            print("rc=%d" % os.waitstatus_to_exitcode(st))
            return
        time.sleep(0.1)
    print("still running after 30 s")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "paste":
        paste(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] in ("stall", "stall-gone"):
        stall(float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[1] == "stall-gone")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
