/* policy.h - the compiled policy: what a sandbox session may see, write and
 * inherit. Built once from the built-in default profile plus an optional user
 * profile layered on top, then immutable for the session. */
#pragma once
#include <jansson.h>
#include <stdbool.h>

#include "../common/err.h"
#include "../common/util.h"
#include "../net/mcp.h"
#include "../net/rules.h"
#include "names.h"

enum policy_path_mode { POLICY_RO, POLICY_RW };

struct policy_path {
	char *path;                 /* absolute, "~/" already expanded, normalised */
	enum policy_path_mode mode;
	char *origin;               /* "FILE:LINE" where the directive stands */
	char *source;               /* the host path bound at `path` when it is another one
				       (a task's view of its git directory: task.h), else NULL */
};

/* A network rule as declared: `net allow PATTERN [private]`, `net deny
 * PATTERN` or --allow-net, compiled once by rules_parse_pattern
 * (src/net/rules.h). */
struct policy_net_rule {
	struct net_rule rule;       /* rule.text: the canonical pattern;
				       rule.allow_private: `private` (allow and ask rules) */
	enum rules_verdict action;  /* RULES_ALLOW, RULES_DENY or RULES_ASK */
	char *origin;               /* "FILE:LINE", or "--allow-net" */
};

/* A secret by reference (`secret NAME host HOST... [file PATH | command
 * CMD ARG...]`, --secret NAME@HOST,...): the value stays outside the
 * sandbox, which sees a phantom in NAME; the proxy puts the value in place
 * of the phantom only in requests to `hosts` (src/secrets/). The policy
 * holds where the value comes from, never the value. */
enum policy_secret_source { SECRET_FROM_ENV, SECRET_FROM_FILE, SECRET_FROM_COMMAND };

struct policy_secret {
	char *name;                 /* the variable inside ([A-Za-z_][A-Za-z0-9_]*) */
	struct net_rule *hosts;     /* where it may be sent: patterns compiled by
				       rules_parse_pattern (host, *.suffix, IP, optional :port),
				       none wider than one registrable domain */
	size_t nhosts;
	enum policy_secret_source source;
	char *file;                 /* FROM_FILE: absolute path ("~/" expanded with home) */
	struct strv argv;           /* FROM_COMMAND: the command and its arguments */
	char *origin;               /* "FILE:LINE", "--secret", or e.g. "agent claude" */
};

/* Resource limits (`limit KIND VALUE`), each set by the last line naming
 * its kind. value 0 is "unlimited". Where each is enforced (a cgroup, an
 * rlimit, the tmpfs mounts) is decided per session: src/sandbox/limits.h. */
enum policy_limit_kind {
	LIMIT_PIDS,    /* processes and threads in the sandbox, init included */
	LIMIT_MEMORY,  /* bytes of memory (a cgroup's memory.max) */
	LIMIT_CPU,     /* thousandths of a CPU (a cgroup's cpu.max) */
	LIMIT_TMP,     /* bytes: the one tmpfs behind /tmp, /var/tmp and /dev/shm */
	LIMIT_HOME,    /* bytes: the home tmpfs */
	LIMIT_LOG,     /* bytes of the session's audit log (src/audit/log.c): past it,
			  the session is ended */
	LIMIT_KINDS
};

struct policy_limit {
	unsigned long long value;   /* 0: unlimited, or a share (percent) */
	/* memory only, `limit memory N%`: N percent (1-100) of the memory warden
	 * may give the session (MemTotal, or less when the cgroups above the
	 * session's have a lower limit), worked out per session (limits.h);
	 * value is 0 then. 0: value is the limit. */
	unsigned percent;
	char *origin;               /* "FILE:LINE" of the line that set it; NULL: none did */
};

/* Exec control by content (`exec ...` lines): which programs may run,
 * decided by the supervisor from each program's SHA-256 (src/supervisor/
 * execs.h), and strict mode, where nothing the agent can write is
 * executable (src/sandbox/mounts.c). */
#define POLICY_EXEC_HASH_MAX_SIZE (1ULL << 30) /* bytes hashed per file, by default */
#define POLICY_EXEC_HASH_TIMEOUT_MS 10000u     /* time to hash one file, by default */
struct policy_exec {
	/* `exec deny TARGET`: SHA-256s (lower-case hex, each once) of programs
	 * that must not run, whatever their name or path */
	struct strv deny;
	/* `exec deny FILE`: the real path of each file named (strict mode hides
	 * those that lie in the system directories) */
	struct strv deny_paths;
	/* `exec allow TARGET`: SHA-256s allowed under `exec default deny` */
	struct strv allow;
	/* `exec allow DIR`: directories whose files are allowed as a whole
	 * under `exec default deny`, as long as the agent cannot write them
	 * (read-only inside: the system directories, a client's install) */
	struct strv allow_dirs;
	/* `exec allow FILE` naming no file when the profile was read: it
	 * allows nothing (a note says so), and a session refuses it where the
	 * agent can write, where it could make FILE for a later session's
	 * `exec allow` to hash and allow (src/supervisor/services.c) */
	struct strv absent;
	bool default_deny;          /* `exec default deny`: only what is allowed runs */
	bool strict;                /* `exec strict` */
	/* `exec allow-writable PATH`: writable paths whose files stay
	 * executable (strict mode, /tmp, home); absolute ("~/" expanded), or
	 * relative to the workspace */
	struct strv allow_writable;
	/* `exec hash-limit SIZE SECONDS`: what the supervisor hashes at most per
	 * file, and for how long; a file past either is recorded without its
	 * hash (refused while a rule needs one) */
	unsigned long long hash_max_size;
	unsigned hash_timeout_ms;
	/* `exec ask TARGET`: SHA-256s whose exec waits for a human's answer
	 * (src/control/approval.h) */
	struct strv ask;
	/* `exec ask argv WORD...`: argv patterns (the words joined by one
	 * space; the first matches the program's name, the others its
	 * arguments in order, with globs, a last `*` any rest): a guardrail,
	 * the same question */
	struct strv ask_argv;
	/* `exec kernel auto|on|off`: the rules enforced in the kernel too, by
	 * a BPF LSM program (src/supervisor/exec/bpfexec.h): auto (the default)
	 * where this host can, on: refuse to run where it cannot, off: never */
	enum policy_exec_kernel { EXEC_KERNEL_AUTO, EXEC_KERNEL_ON, EXEC_KERNEL_OFF } kernel;
};

/* A tool-call rule (`tool allow|deny|ask NAME [PATTERN...]`), decided for
 * the tool calls an agent's hook reports (src/control/hook.h): NAME a glob
 * over the tool's name (Bash, Write, mcp__server__tool), PATTERN a glob
 * over what the call is about (a command, a path, a URL; the words joined
 * by one space), NULL for any. */
struct policy_tool_rule {
	enum rules_verdict action;  /* RULES_ALLOW, RULES_DENY or RULES_ASK */
	char *name, *pattern;
	char *origin;               /* "FILE:LINE" */
};

/* `cache ~/PATH` lines a policy holds, and the length of a PATH. */
#define POLICY_EXCEPT_MAX 16
#define POLICY_CACHES_MAX 16
#define POLICY_CACHE_PATH_MAX 255

/* A published port (`publish [HOST_PORT:]PORT`, --publish): the host's
 * loopback port host_port leads to port inside (src/supervisor/publish.h). */
#define POLICY_PUBLISH_MAX 16
struct policy_publish {
	uint16_t host_port, port;
	char *origin;               /* "FILE:LINE", or "--publish" */
};

/* Who answers the questions of `ask` rules, and for how long a question
 * waits (src/control/approval.h). */
#define POLICY_APPROVE_TIMEOUT_DEFAULT 60
struct policy_approve {
	unsigned timeout_s;         /* `approve timeout SECONDS`: no answer in time is a denial */
	struct strv command;        /* `approve command CMD ARG...`: the reviewer, first */
	char *webhook;              /* `approve webhook URL`: told of each question put to humans */
	/* `warden run --ci` (not a profile line): no terminal, no `warden
	 * approve`; a question the reviewer does not settle goes to the
	 * webhook, or is refused at once (approval.h) */
	bool ci;
};

/* The live stream (`stream otlp URL [ca FILE]`, `stream ocsf FILE`:
 * src/export/stream.h); NULL: none. */
struct policy_stream {
	char *otlp_url, *otlp_ca, *ocsf_file;
};

struct policy {
	struct policy_path *paths;  /* extra binds at the same path inside */
	size_t npaths;
	struct strv protect;        /* workspace-relative paths kept read-only */
	struct strv protect_except; /* `protect !PARENT/NAME`: a directory just inside a
				       protected path the profile names, kept writable (made
				       when missing); at most POLICY_EXCEPT_MAX */
	struct strv mask;           /* glob patterns masked (unreadable) at any depth */
	struct strv caches;         /* `cache ~/PATH`: PATHs (no "~/") of the home inside
				       kept for the workspace's next sessions */
	struct strv env_pass;       /* variable names or globs (LC_*) passed through */
	struct strv env_set;        /* NAME=VALUE set inside */
	struct strv sources;        /* files read, in order ("builtin:default" first) */
	struct strv notes;          /* what a line cannot do on this machine, which is no
				       error ("FILE:LINE: why": an `exec deny FILE` with no
				       FILE here, an `env pass` of a variable warden sets):
				       said when a session loads the policy */
	struct strv inputs;         /* every file the policy comes from: the profiles and
				       their includes, rules files, exec targets and hash
				       lists (paths as named; read-only inside when in the
				       workspace, so that the agent cannot loosen its next
				       session: session.c) */
	bool audit_files;           /* `audit files`: also record write-intent file operations */
	bool audit_minimal;         /* `audit minimal`: no file events (the default records
				       write-intent file operations, bounded) */
	/* `signal grace SECONDS`: after SIGINT, SIGTERM or SIGHUP reached the
	 * whole sandbox, how long it may take to end before warden kills it
	 * (0: at once). The built-in default profile sets
	 * POLICY_SIGNAL_GRACE_DEFAULT. */
	unsigned signal_grace;
	/* `freeze timeout DURATION|auto`: how long a frozen sandbox waits for
	 * `warden resume` or `warden kill` before warden kills it (0: at once).
	 * auto (the built-in default profile's): POLICY_FREEZE_TIMEOUT_DEFAULT
	 * when a human can be told of the freeze, at once when none can (see
	 * policy_freeze_timeout). */
	unsigned freeze_timeout_s;
	bool freeze_timeout_auto;
	/* `terminal clipboard allow`: OSC 52 passes to the user's terminal
	 * (off by default: src/supervisor/ttyfilter.h) */
	bool terminal_clipboard;
	/* `canary off`: no decoy credentials in the home (src/detect/canary.h;
	 * on by default) */
	bool canary_off;
	/* `git-identity off`: no ~/.gitconfig with the user's git identity
	 * in the home (src/workspace/gitident.h; on by default) */
	bool git_identity_off;
	/* `workspace read-only`: the workspace mounted read-only inside, as
	 * --read-only asks (src/session/layout.h) */
	bool workspace_ro;
	/* published ports, each host port once, in order (never from an agent
	 * profile: publishing is the user's decision) */
	struct policy_publish *publish;
	size_t npublish;
	struct policy_net_rule *net; /* as declared, in order, each once (`policy show`) */
	size_t nnet;
	/* The same rules as the proxy decides with them (rules_match,
	 * dial_allowed): the allow and the deny list, deny winning whatever the
	 * order; a pattern declared both with and without `private` is one
	 * allow rule with allow_private. */
	struct net_rules net_rules;
	/* `mcp` rules: the tools and methods of MCP servers reached over
	 * HTTP(S) (src/net/mcp.h, src/policy/parse_mcp.c) */
	struct mcp_rules mcp;
	/* Secrets by reference, each NAME once (a later declaration replaces
	 * an earlier one), in order of first declaration. A NAME here is never
	 * in env_pass or env_set. */
	struct policy_secret *secrets;
	size_t nsecrets;
	struct policy_limit limits[LIMIT_KINDS];
	struct policy_exec exec;
	/* `net default ask`: a destination no rule names is a question, not a
	 * refusal */
	bool net_default_ask;
	/* `net sni required`: a TLS ClientHello in a tunnel must name a host */
	bool net_sni_required;
	/* `write ask GLOB`: a write-intent open, rename or unlink of a
	 * workspace path matching one (relative to the workspace, at any depth
	 * like `mask`) waits for an answer */
	struct strv write_ask;
	struct policy_tool_rule *tools; /* in order; the first that matches decides */
	size_t ntools;
	enum rules_verdict tool_default; /* `tool default allow|deny|ask` (RULES_UNKNOWN: allow) */
	struct policy_approve approve;
	struct policy_stream stream;
	/* `rules FILE`: detection rules files, on top of the built-in ones
	 * (src/detect/ruleset.h), in order */
	struct strv rules_files;
	/* `risk warn|ask|freeze|kill N|off` and `risk half-life DURATION`: the
	 * risk score's thresholds (0: off) and decay (src/detect/detect.h);
	 * the built-in default profile sets them all */
	struct policy_risk {
		double warn, ask, freeze, kill;
		double half_life_s;
	} risk;
	/* `checkpoint on|off`, `checkpoint max-size SIZE|unlimited`, `checkpoint
	 * exclude PATTERN`, `checkpoint keep N`, `checkpoint keep-days N`: the
	 * workspace recorded before each session (src/checkpoint/); the built-in
	 * default profile sets the sizes and the retention */
	struct policy_checkpoint {
		bool off;
		unsigned long long max_size; /* bytes of file content; 0: unlimited */
		struct strv exclude;         /* a name at any depth, or a path with '/' */
		unsigned keep;               /* sessions' checkpoints kept per workspace */
		unsigned keep_days;          /* and none older than this */
	} checkpoint;
	/* `ssh-agent on|ask [KEY...]`, `ssh-agent off`, --ssh-agent, --ssh-key:
	 * a socket inside that lists and signs with the host agent's keys
	 * named (by "SHA256:..." fingerprint or comment; none named: all),
	 * refusing the rest (src/supervisor/sshagent_srv.h); ask: each
	 * signature a question for a human */
	struct policy_ssh_agent {
		bool on, ask;
		struct strv keys;
	} ssh_agent;
};

/* Build the policy: the built-in default profile, then `file` on top when it
 * is not NULL. "~" and "~/" in paths expand against `home` (the invoking
 * user's home directory; NULL: a profile using "~" is an error). Errors name
 * "FILE:LINE:COL: message". */
int policy_load(struct policy *p, const char *file, const char *home, struct werr *e);

/* The same with a built-in layer between the default and `file`: an agent
 * profile (src/agents/agents.h), named layer_name ("builtin:agent-claude")
 * in sources and error messages. layer_text NULL: policy_load. */
int policy_load_layered(struct policy *p, const char *layer_name, const char *layer_text,
			const char *file, const char *home, struct werr *e);

/* Parse profile text on top of `p` (used by policy_load and by the fuzz
 * target). `name` is the file name used in error messages; includes are
 * resolved relative to `dir` (NULL forbids includes of files); `home` as for
 * policy_load. */
int policy_parse_text(struct policy *p, const char *name, const char *dir, const char *home,
		      const char *text, size_t len, struct werr *e);

void policy_free(struct policy *p);

/* Add a network rule from outside a profile (--allow-net). Validates the
 * pattern; an equal rule is not added twice. */
int policy_add_net(struct policy *p, const char *pattern, bool deny, bool private_ok,
		   const char *origin, struct werr *e);
/* A compiled rule (a request rule, say: rules_parse_pattern, then
 * reqrules_methods and reqrules_path) added as policy_add_net adds one: once,
 * with origin (such as "agent claude"). */
int policy_add_net_rule(struct policy *p, const struct net_rule *r, enum rules_verdict action,
			const char *origin, struct werr *e);

/* Why full (absolute, normalised) cannot be bound with mode ("cannot be
 * bound into the sandbox", "may not be writable in the sandbox"), or NULL:
 * what `read-only` and `read-write` refuse, for those that write them
 * (`warden import`). */
const char *policy_path_refused(const char *full, enum policy_path_mode mode);

/* Bind a path from outside a profile (--output, --scratch, a task's git
 * directory): as `read-only PATH` / `read-write PATH` would, refused where
 * those are; a path already there takes the new mode and origin. */
int policy_add_path(struct policy *p, const char *path, enum policy_path_mode mode,
		    const char *origin, struct werr *e);

/* The same, the host path source bound at the path inside (a directory
 * warden made: no check of its own). */
int policy_add_bind(struct policy *p, const char *inside, const char *source,
		    enum policy_path_mode mode, const char *origin, struct werr *e);

/* Bind a secret from the command line: spec is "NAME@HOST,HOST..." or
 * "NAME" (only when the policy binds NAME already: its hosts are kept).
 * The value comes from the variable NAME; a secret of the same NAME is
 * replaced; NAME leaves env_pass and env_set. Errors name origin
 * ("--secret" when NULL or empty) and the spec. */
int policy_add_secret(struct policy *p, const char *spec, const char *origin, struct werr *e);

/* Publish a port from outside a profile (--publish): spec is
 * "[HOST_PORT:]PORT". The same mapping again is not added twice; a host
 * port published already to another port is an error naming origin and
 * spec, as is a spec that is not one (policy_publish_parse). */
int policy_add_publish(struct policy *p, const char *spec, const char *origin, struct werr *e);
/* Read "[HOST_PORT:]PORT" (HOST_PORT: PORT when left out): NULL, or why it
 * is not one (static text). */
const char *policy_publish_parse(const char *spec, uint16_t *host_port, uint16_t *port);
void policy_publish_free(struct policy *p);

/* The secret named `name`, or NULL. */
const struct policy_secret *policy_secret_find(const struct policy *p, const char *name);

/* Why a compiled pattern may not bind a secret (a wildcard over a public
 * suffix, wider than one registrable domain), or NULL when it may. */
const char *policy_secret_host_refused(const struct net_rule *r);
/* Whether a compiled pattern is a wildcard over a two-label public suffix
 * ("*.co.uk", "*.com.au": secret.c's list): refused for allow and ask
 * rules as "*.com" is. */
bool policy_wildcard_public_suffix(const struct net_rule *r);

/* For the parser (src/policy/secret.c): add a compiled pattern to s->hosts
 * unless it is there (false: too many hosts, max 64); put s, taken over,
 * into the policy (replacing the secret of the same name, NAME out of
 * env_pass and env_set); free what a secret holds. */
bool policy_secret_add_host(struct policy_secret *s, const struct net_rule *r);
void policy_secret_bind(struct policy *p, struct policy_secret *s);
void policy_secret_clear(struct policy_secret *s);

/* `ssh-agent` from outside a profile (--ssh-agent, --ssh-key KEY: key
 * NULL for the first). */
void policy_add_ssh_key(struct policy *p, const char *key);

/* Can the session put a question to a human: does any rule ask
 * (src/control/approval.h)? */
bool policy_asks(const struct policy *p);

/* May anything go out at all: does any rule allow a destination, or may a
 * human allow one (so that the proxy can lead somewhere)? */
bool policy_net_allows_any(const struct policy *p);

/* The effective policy as a JSON object (new reference). */
json_t *policy_to_json(const struct policy *p);

/* SHA-256 hex digest of the policy's canonical JSON (65 bytes with NUL). */
void policy_digest(const struct policy *p, char out[65]);

/* The grace period of the built-in default profile, and the largest a
 * profile may set (seconds). */
#define POLICY_SIGNAL_GRACE_DEFAULT 10
#define POLICY_SIGNAL_GRACE_MAX 86400

/* `freeze timeout auto` with a human to decide, and the largest a profile
 * may set (seconds). */
#define POLICY_FREEZE_TIMEOUT_DEFAULT 600
#define POLICY_FREEZE_TIMEOUT_MAX 86400

/* How long a freeze lasts before the kill (seconds): the profile's `freeze
 * timeout`; for auto, POLICY_FREEZE_TIMEOUT_DEFAULT when attended (a human
 * can decide: a terminal, a reviewer, a webhook, the one who froze it), 0
 * when not. */
unsigned policy_freeze_timeout(const struct policy *p, bool attended);

/* A limit kind's name in a profile ("pids", "memory", "cpu", "tmp", "home", "log"). */
const char *policy_limit_name(enum policy_limit_kind k);

/* A limit's value as a profile writes it: "unlimited", "4096" (pids), "1.5"
 * (cpu), "4G", "1536M", "8K" or plain bytes (sizes: the largest unit of
 * 1024 that divides the value). */
void policy_limit_format(enum policy_limit_kind k, unsigned long long v, char *buf, size_t len);

/* Parse VALUE of `limit KIND VALUE` into *v (0: "unlimited"). NULL, or why
 * not ("not a size ...", "below the minimum 1M", ...). */
const char *policy_limit_parse(enum policy_limit_kind k, const char *text, unsigned long long *v);

/* Parse "N%" (N 1 to 100, a share of `limit memory`) into *percent: 1
 * when it is one, 0 when text does not end in '%' (a value, for
 * policy_limit_parse), -1 with *why when it is a bad one. */
int policy_limit_parse_share(const char *text, unsigned *percent, const char **why);

/* A limit as the profile wrote it: "50%" for a share, else as
 * policy_limit_format writes its value. */
void policy_limit_text(enum policy_limit_kind k, const struct policy_limit *l, char *buf, size_t len);

/* Did a profile line ask for this limit, rather than the built-in default
 * (whose limits are never worth a note when they cannot be enforced)? */
bool policy_limit_explicit(const struct policy_limit *l);

/* The built-in default profile text. */
extern const char policy_builtin_default[];

/* policy_env_name_valid: names.h */
