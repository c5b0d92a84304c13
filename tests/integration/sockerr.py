#!/usr/bin/env python3
"""sockerr.py - a stderr that is a socket nobody reads for a while, as a
service's stderr to the journal is when journald falls behind.

  sockerr.py OUT GO COMMAND...
      Runs COMMAND with its stdin and stdout /dev/null and its stderr one
      end of a Unix stream socket pair; writes the first line read from
      the other end to OUT.first, then reads nothing more until the file GO
      exists; then reads the rest to OUT (lines "y" left out) and exits
      with COMMAND's status.
"""
import os
import socket
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, go, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=theirs)
    theirs.close()
    lines = mine.makefile('rb')
    with open(out + '.first', 'wb') as first:
        first.write(lines.readline())
    while not os.path.exists(go):
        time.sleep(0.05)
    with open(out, 'wb') as rest:
        for line in lines:
            if line != b'y\n':
                rest.write(line)
    sys.exit(proc.wait())


if __name__ == '__main__':
    main()
