/* ruleset.h - detection rules: their text format, parsed into a ruleset that
 * the engine (detect.h) runs over a session's event stream.
 *
 * A rules file is line-oriented, like a profile: one directive per line,
 * tokens separated by blanks, '#' starting a comment (at the start of a line
 * or after a blank), a value with blanks in double quotes ("\"" and "\\"
 * inside). A rule starts with `rule` and owns the lines after it up to the
 * next `rule`, `rate` or `disable`:
 *
 *   rule NAME SEVERITY          SEVERITY: low, medium, high or critical
 *     on KIND COND...           the event that starts it (alone, that fires it)
 *     then KIND COND...         a later event: a sequence, each step after the last
 *     within DURATION           from the first event to the last (default 60s)
 *     count N                   the `on` event N times within the window
 *     same FIELD                the events of a count or a sequence agree on FIELD
 *     differ FIELD              ... and each has a value of FIELD none before it had
 *                               (a count: N different values; an event without
 *                               one does not count)
 *     scope session|tree        a sequence within the session (default), or within
 *                               the process tree of its first event (its pid and
 *                               the processes below it, as the execs' ppids show)
 *     action warn|ask|freeze|kill   act at once, whatever the risk score
 *     about TEXT...             what it means, in words (the alert's detail)
 *   rate GLOB SEVERITY          alerts raised by warden's other checks (their
 *                               `rule` matched by GLOB), rated for the risk score:
 *                               the first line that matches, a later file's
 *                               lines before an earlier one's; a user's line
 *                               before the alert's own severity, the built-in
 *                               lines after it
 *   disable NAME                a rule defined before (a built-in one) is off
 *
 * KIND is an event kind ("exec", "net", "syscall", "file", "alert", ...) or
 * "*". A COND tests one field of the event:
 *   FIELD=GLOB[|GLOB...]   a glob (fnmatch, '*' crosses '/') matches the
 *                          value; a number is matched as its decimal text,
 *                          true/false as those words; an array: any element
 *   FIELD!=GLOB[|GLOB...]  none matches (an absent field matches none)
 *   FIELD=hashes:FILE      the value is one of the SHA-256s FILE lists (as
 *                          sha256sum writes them; FILE absolute, or relative to
 *                          the rules file's directory; read when the rules are);
 *                          FIELD!=hashes:FILE: none of them
 *   FIELD~REGEX            POSIX extended regex, anywhere in the value (dre.h:
 *                          matched in linear time, no back-references)
 *   FIELD>N, FIELD<N       a number (K, M, G suffixes: 1000s) compared
 *   FIELD                  present, and not null, false, "" or []
 *   !FIELD                 absent, null, false, "" or []
 *   new:FIELD              its value not seen in an earlier event of the
 *                          same kind in this session
 * FIELD is a field's name, or "argc" (the length of an exec's argv), or one
 * the detector derives where the event has none (derive.h): "program" (of a
 * file or net event: what its pid executed; with no pid, the session's last
 * exec), "cwd" (its pid's at that exec), "paths" (a file event's path and
 * path2), "dotdot" (an exec's arguments or a file event's paths that go past
 * the workspace's top through ".."), "via_symlink" (the target of a symlink
 * the session made, for an argument or path naming it), "dest" (of a net
 * event: "HOST:PORT", "ADDRESS:PORT" or "[ADDRESS]:PORT", or a unix
 * socket's path; `new:dest`, a destination not tried before). In a
 * GLOB, $WORKSPACE and $HOME stand for the workspace's path and the agent's
 * home inside. DURATION: a number with s, m or h (a bare number: seconds).
 * Errors name FILE:LINE:COL. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "../common/err.h"
#include "dre.h"

struct glob;

enum severity { SEV_LOW, SEV_MEDIUM, SEV_HIGH, SEV_CRITICAL, SEV_COUNT };
enum det_action { ACT_NONE, ACT_WARN, ACT_ASK, ACT_FREEZE, ACT_KILL };

const char *severity_name(enum severity s);
const char *det_action_name(enum det_action a);

enum cond_op { COND_GLOB, COND_NOT_GLOB, COND_REGEX, COND_GT, COND_LT, COND_PRESENT,
	       COND_ABSENT, COND_NEW };

struct cond {
	char *field;
	enum cond_op op;
	char *text;              /* as written, after the operator (rules show) */
	char **alts;             /* COND_GLOB, COND_NOT_GLOB: the alternatives */
	size_t nalts;
	struct glob *globs;      /* the alternatives looked at once (detect_new), or NULL */
	char **set;              /* FIELD=hashes:FILE: the SHA-256s, sorted (then no alts) */
	size_t nset;
	struct dre *re;          /* COND_REGEX */
	double num;              /* COND_GT, COND_LT */
	int seen;                /* COND_NEW: the engine's seen-set (detect.c) */
	int memo;                /* a glob's or regex's bit in the engine's text memo (textmemo.h), or -1 */
};

struct step {
	char *kind;              /* "*" = any */
	struct cond *conds;
	size_t nconds;
};

struct rule {
	char *name;
	enum severity sev;
	enum det_action action;  /* ACT_NONE: only the risk score acts */
	struct step *steps;      /* steps[0] from `on`, the rest from `then` */
	size_t nsteps;
	unsigned count;          /* 0 or 1: once */
	double within_s;
	char *same;              /* or NULL */
	char *differ;            /* or NULL: the events of a count or sequence each a
				    different value of it */
	bool tree;               /* `scope tree`: a sequence's later events come from the first
				    one's process or its descendants */
	char *about;             /* or NULL */
	char *origin;            /* FILE:LINE of its `rule` line */
	bool disabled;
};

struct rate {
	char *glob;
	enum severity sev;
	char *origin;
	bool builtin;            /* from builtin:rules: an alert's own severity comes first */
};

struct ruleset {
	struct rule *rules;
	size_t nrules;
	struct rate *rates;
	size_t nrates;
	char **sources;          /* the files read, "builtin:rules" first */
	size_t nsources;
};

/* The built-in rules' text (builtin_rules.c). */
extern const char detect_builtin_rules[];
/* The other checks' alert rules (NULL-terminated; builtin_rules.c). */
extern const char *const detect_other_alerts[];

/* Parse rules text on top of rs (a later rule of an existing name replaces
 * it). name: the file's name in messages. -1 with e "NAME:LINE:COL: ...". */
int drules_parse(struct ruleset *rs, const char *name, const char *text, size_t len,
		struct werr *e);

/* The built-in rules, then each file of files (NULL-terminated list; each
 * read whole, at most 1 MiB, a regular file). A file's `rate GLOB` that
 * matches no alert (a detector rule's name, or detect_other_alerts) is an
 * error naming its line: a typo would leave the severity CI gates on
 * unchanged, silently. */
int drules_load(struct ruleset *rs, const char *const *files, size_t nfiles, struct werr *e);

void drules_free(struct ruleset *rs);

/* The ruleset as rules text (what `warden rules show` prints): every rule
 * that is not disabled, then the rates. malloc'd. */
char *drules_text(const struct ruleset *rs);
