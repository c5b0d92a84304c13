#!/bin/sh
# secret-cmd.sh - the command source of test_secrets.c: what a credential
# helper might do, one behaviour per first argument.
case "$1" in
ok)       cat; printf 'cmd-value-%s\n\n' 0123456789 ;;  # stdin must be /dev/null
fail)     echo "partial-output-123"; echo "secret-cmd: failing on purpose" >&2; exit 3 ;;
empty)    exit 0 ;;
newlines) printf '\n\n' ;;
signal)   kill -9 $$ ;;
huge)     head -c 70000 /dev/zero | tr '\0' a ;;
short)    printf 'abc\n' ;;
fds)      if [ -e "/proc/$$/fd/$2" ]; then echo "secret-cmd: fd $2 inherited" >&2; exit 4; fi
	  echo fds-value-0123 ;;
hang)     (sleep 1; touch "$2") & sleep 30 ;;              # the group must die
linger)   exec >/dev/null; sleep 30 ;;                       # stdout closed, still running
*)        echo "secret-cmd: unknown mode $1" >&2; exit 2 ;;
esac
