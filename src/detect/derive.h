/* derive.h - the fields a rule can test that no event carries, derived by
 * the detector from what the stream showed before (ruleset.h lists them):
 *
 *   program      of an event other than an exec that has none: the program
 *                its pid last executed (the exec events' "resolved"); an
 *                event with no pid (a connection through the proxy): the
 *                program of the session's last exec, a guess
 *   cwd          of an event other than an exec: its pid's cwd at that exec
 *   paths        of a file event: its path and path2 (an array)
 *   dotdot       the spellings that go past the workspace's top through "..":
 *                an exec's arguments (from its cwd), a file event's paths;
 *                each starting in the workspace and ending outside it
 *   via_symlink  what a symlink the session made points to (file events of
 *                op "symlink" with their "target"), for an exec argument or
 *                a file event's path that names that symlink
 *   dest         of a net event: where it went, as one text: "HOST:PORT",
 *                "ADDRESS:PORT" ("[ADDRESS]:PORT" for IPv6), or a unix
 *                socket's path (for `new:dest`: a destination not tried
 *                before in the session)
 *
 * Bounded: the last 8192 processes and 256 symlinks, the oldest replaced. */
#pragma once
#include <jansson.h>
#include <stdbool.h>

struct derive;

struct derive *derive_new(const char *workspace);
void derive_free(struct derive *dv);

/* Note an event (before the rules see it): an exec's program and cwd, a
 * symlink's target. */
void derive_note(struct derive *dv, const char *kind, const json_t *ev);

/* field of ev, derived: a new reference, or NULL (not a derived field, or
 * nothing to derive it from). Only for a field ev lacks. */
json_t *derive_field(struct derive *dv, const char *kind, const json_t *ev, const char *field);
