/* proctitle.h - warden's own argument area, the memory /proc/PID/cmdline
 * reads: noted once at start (main), and overwritten by sandbox init, a
 * clone of warden, so that the sandbox's /proc/1/cmdline shows a title
 * rather than warden's host path and options (src/sandbox/init.c). Noted
 * rather than asked of /proc/self/cmdline by init: init's work is on the
 * way to the command's start, and each page it first touches or copies is
 * dear on a paravirtualised host (bench/README.md, "Noon, 2026-12-04"). */
#pragma once

/* The area main's argv lies in (the kernel lays its strings end to end). */
void proctitle_note(int argc, char **argv);
/* Overwrite the area noted: title (cut to fit), the rest zeros. Nothing
 * when none was noted or it is no longer than title: the strings the
 * command's argv points to must not be in it (sandbox.h: spec->argv is a
 * copy). */
void proctitle_set(const char *title);
