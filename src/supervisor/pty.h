/* pty.h - host-side terminal handling for the agent's pty (see pty.c). */
#pragma once
#include <stdbool.h>
#include <termios.h>

int pty_host_raw(int fd);                  /* save settings, go raw */
void pty_host_restore(int fd);             /* restore what pty_host_raw saved */
void pty_copy_settings(int host, int master);
void pty_copy_winsize(int host, int master);
/* Move what is readable from `from` to `to`: 1 moved or nothing ready yet,
 * 0 end of file, -1 error (EIO from a master whose slave closed). */
int pty_pump(int from, int to);
