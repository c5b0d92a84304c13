/* events.h - the one definition of the audit event format, shared by the
 * writer (log.c) and the reader (chain.c, format.c, sessions.c): the
 * session-id rule, the header keys every line carries, the "prev" of a log's
 * first line, and one typed constructor per kind of event that warden emits.
 *
 * A line is a JSON object: the header v, ts, session, seq, event; then the
 * kind's fields in the order its constructor gives them; then prev, the
 * SHA-256 of the previous line (AUDIT_PREV_FIRST on line 1). */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The format's version: the "v" of every line. */
#define AUDIT_FORMAT_VERSION 1

/* The "prev" of a log's first line: 64 zeros. */
#define AUDIT_PREV_FIRST "0000000000000000000000000000000000000000000000000000000000000000"

/* Session ids become file names: [A-Za-z0-9._-], 1 to 200 characters, not
 * starting with '.' (so never "." or "..", never a path). NULL is invalid. */
bool audit_session_id_valid(const char *s);

/* The header keys, in the order a line carries them ("prev" comes last, after
 * the fields); no field of an event may take one of these names. */
extern const char *const audit_header_keys[6];
bool audit_is_header_key(const char *k);

/* The kinds of event on the stream, one constructor below each (log.failed,
 * which the log's writer alone writes, is on no stream); a detection rule
 * naming another kind would never fire. audit_event_kinds: them all (*v,
 * static), their number returned, for a message that names them. */
bool audit_event_kind_known(const char *kind);
size_t audit_event_kinds(const char *const **v);

/* ---- events -------------------------------------------------------------- */

/* One event on a session's stream. A constructor fills kind and fields;
 * audit_emit_event (audit.h) fills the rest before subscribers see it. */
struct event {
	const char *kind;        /* "exec", "net", ...: a static string */
	json_t *fields;          /* the kind's fields (an object), owned; NULL = none */
	const char *session;     /* set on emission */
	const char *ts;          /* set on emission: 2026-01-02T03:04:05.123456Z */
	unsigned long seq;       /* set on emission: the line number, from 1 */
};

/* A program executed (execve/execveat notified, let through). */
struct ev_exec {
	long pid, ppid;          /* inside the sandbox; -1 when gone */
	long host_pid;
	bool execveat;           /* else execve */
	const char *cwd, *path;  /* path as given */
	json_t *argv;            /* array of strings (stolen) */
	bool argv_escaped;       /* its strings are escaped (escape.h) */
	bool argv_truncated;
	const char *resolved;    /* inside the sandbox; NULL = not resolved (null) */
	const char *sha256;      /* of the file */
	const char *interpreter; /* a script's #! line; "" = not a script (left out) */
	const char *interpreter_sha256; /* of the #! line's program; NULL: left out */
	const char *program;     /* the loader run as a program: the program it was given */
	const char *program_resolved, *program_sha256;
	const char *deny;        /* refused, and why; NULL: allowed */
	const char *hash_missing; /* sha256 NULL: why it could not be had (NULL: left out) */
	bool swapped;            /* what ran instead of the file checked (supervisor/exec/exectrace.h) */
	bool writable;           /* a file the agent can change (not on a read-only mount, or a
				    hard link a writable one reaches): "writable": true */
	const char *tool;        /* the tool call it belongs to (a tool event's id), or NULL
				    (src/control/toollink.h) */
	const char *syscall;     /* NULL: from execveat (execve/execveat); else this one
				    ("mmap", "mprotect": a file mapped executable) */
	const char *kernel_hook; /* refused in the kernel, by BPF LSM, at this hook
				    ("bprm_check_security", "mmap_file", "file_mprotect"):
				    "enforced_by": "bpf-lsm", "hook": HOOK; NULL: left out */
	/* the code hashes (src/common/elfhash.h) of the file, the script's
	 * interpreter, the loader's program: NULL left out (no ELF); and why
	 * an ELF file has none (NULL: left out) */
	const char *code_sha256, *code_missing;
	const char *interpreter_resolved; /* the #! line's program found inside; NULL: left out */
	const char *interpreter_code_sha256, *program_code_sha256;
	/* scripts named as interpreters in turn (a #! line naming a script),
	 * before the interpreter the fields above describe: n of them, each
	 * as resolved and its SHA-256 (NULL: none) */
	size_t nscripts;
	const char *const *scripts, *const *scripts_sha256;
};
struct event ev_exec(const struct ev_exec *x);

/* A direct connect() from inside to an address outside the sandbox's
 * loopback: refused (the network namespace has no route). */
struct ev_net_connect {
	long pid, host_pid;
	const char *address;
	unsigned port;
	const char *method;      /* "connect", or "sendto" (a datagram with an address); NULL: connect */
	const char *reason;      /* NULL: "direct connection: the sandbox has no route out" */
};
struct event ev_net_connect(const struct ev_net_connect *x);

/* Refused connections out (direct ones, or to a host's unix socket)
 * past the record's bound (recbound.h), counted: method "summary",
 * decision "deny", count, new (to destinations not on the record before,
 * else repeats of ones that are), summary in words. */
struct ev_net_summary {
	unsigned long count;
	bool new_dests;
	const char *summary;
};
struct event ev_net_summary(const struct ev_net_summary *x);

/* A connect() from inside to a unix socket the host bound (unixconn.h):
 * refused. path: the socket as the process named it; resolved: as opened. */
struct ev_net_unix {
	long pid, host_pid;
	const char *path, *resolved;
};
struct event ev_net_unix(const struct ev_net_unix *x);

/* A connection through warden's proxy or a host loopback port, when it ends. */
struct ev_net_proxy {
	const char *method;      /* CONNECT, GET, ... or "socks5" */
	const char *host;
	unsigned port;
	const char *address;     /* the address dialled; "" = none (null) */
	bool socks;              /* via SOCKS5, else HTTP */
	bool loopback;           /* a host loopback port (via "loopback"; method "tcp") */
	uint64_t bytes_out, bytes_in;
	double duration_ms;
	bool allowed;
	int status;              /* HTTP status; 0 = none (left out) */
	const char *rule;        /* the rule that allowed it; "" = none (left out) */
	const char *reason;      /* why refused; "" = none (left out) */
	bool intercepted;        /* TLS terminated by warden to put a secret in or for the rules
				  * that inspect the host (or plain, on loopback) */
	unsigned requests;       /* intercepted: the requests forwarded */
	json_t *secrets;         /* intercepted: [{"secret": NAME, "header": H}] substituted (stolen), NULL: none */
	const char *tool;        /* the tool call whose process opened it, or NULL (toollink.h) */
	/* the program whose socket it is (proxy.h's owner lookup): its
	 * executable inside, pid inside and SHA-256 ("": not taken); or why it
	 * cannot be told (program_unknown); all NULL: not looked up */
	const char *program, *program_sha256, *program_unknown;
	long program_pid;
	const char *path;        /* a request's path, where request rules read it; NULL/"": left out */
};
struct event ev_net_proxy(const struct ev_net_proxy *x);

/* One JSON-RPC message to an MCP server warden reads (src/net/proxy_mcp.h):
 * its method, the tool of a tools/call, the decision and the rule that
 * made it ("" = the default), why when refused; asked: a human answered. */
struct ev_mcp {
	const char *host;
	unsigned port;
	const char *method;      /* "" = the client's answer to the server (left out) */
	const char *tool;        /* tools/call: the tool's name; "" = left out */
	bool allowed, asked;
	const char *rule, *reason; /* "" = left out */
};
struct event ev_mcp(const struct ev_mcp *x);

/* A connection from the host to a published port (src/supervisor/publish.h), when
 * it ends: "direction": "inbound". bytes_in went into the sandbox (what the
 * host's client sent), bytes_out came out of it. */
struct ev_net_inbound {
	unsigned host_port, port;
	const char *peer;        /* the host's client, "127.0.0.1:PORT" or "[::1]:PORT" */
	const char *address;     /* inside, "127.0.0.1" or "::1"; NULL: none reached */
	uint64_t bytes_in, bytes_out;
	double duration_ms;
	const char *error;       /* why it reached nothing inside, or NULL */
};
struct event ev_net_inbound(const struct ev_net_inbound *x);

/* A file operation recorded and let through (`audit files`), or one a
 * read-only workspace refuses (decision "deny", the reason). */
struct ev_file {
	long pid;
	const char *op;          /* open, unlink, rename, link, symlink, truncate, mkdir,
				    mknod, chmod, chown, utime, setxattr, removexattr;
				    summary */
	const char *syscall;
	int npaths;              /* 0 to 2: written as "path" and "path2" */
	const char *paths[2];    /* absolute inside the sandbox; NULL = unreadable (null) */
	bool has_flags;
	unsigned long long flags;
	const char *decision;    /* `write ask`: "allow" or "deny"; a read-only workspace's
				    refusal: "deny"; NULL: left out */
	const char *reason;      /* why, with a decision */
	const char *target;      /* a symlink's target, as given; NULL: left out */
	const char *attr;        /* setxattr, removexattr: the attribute's name, as given;
				    NULL: left out */
	/* file actions on the record (src/supervisor/filewhy.h) */
	const char *access;      /* "write" or "read"; NULL: left out */
	bool new_repo;           /* a path in a .git the session made: the sweep judges it */
	unsigned long links;     /* a write to a file of the workspace with this many names
				    (st_nlink > 1); 0: left out */
	bool has_count;          /* op "summary": how many operations it stands for */
	unsigned long count;
	const char *summary;     /* op "summary": what was summarised */
	bool has_repeats;        /* op "summary": of count, how many repeat an operation
				    already on the record ("repeats"); the rest ("unkept")
				    are on keys the record could not keep, past its bound on
				    names kept (new ones, or ones recorded when it was full) */
	unsigned long repeats;
	size_t nkinds;           /* op "summary": "ops", each kind's count (those above 0) */
	const char *const *kind_names;
	const unsigned long *kind_counts;
	bool partial[2];         /* path i could not be made absolute (its directory has no
				    name warden can read: deeper than PATH_MAX): written as
				    given, relative, with "path_partial" (or "path2_partial") */
};
struct event ev_file(const struct ev_file *x);

/* A syscall the policy refuses, answered EPERM. */
struct ev_syscall {
	long pid, host_pid;
	const char *name;        /* NULL = unknown ("?") */
	int nr;
	uint64_t args[6];
	bool ignored;            /* answered success without doing it ("ignore"), else EPERM ("deny") */
	const char *abi;         /* a foreign ABI ("i386", "x32", ...); NULL: the native one */
	const char *path;        /* the file it was about (an mmap's), or NULL */
	const char *reason;      /* why refused, or NULL */
};
struct event ev_syscall(const struct ev_syscall *x);

/* The syscall refusals not logged one by one past the session's limit. */
struct event ev_syscall_suppressed(unsigned long suppressed);

/* A denial by Landlock, read from the kernel's audit records (llrecord.h,
 * src/supervisor/llaudit.h): a `file`, `net` or `signal` event with
 * "decision": "deny", "by": "landlock". The strings come from the records
 * (the agent's paths and command names among them): kept losslessly
 * (escape.h). Fields NULL (or has_* false) are left out unless said. */
#define EV_LANDLOCK_OBJECTS 4
struct ev_landlock_denial {
	const char *kind;        /* "file", "net" or "signal" */
	long pid;                /* inside the sandbox; -1: unknown */
	long host_pid;           /* -1: unknown */
	const char *syscall;     /* its name; NULL: the number, else null */
	bool has_syscall_nr;
	unsigned long long syscall_nr;
	/* file */
	const char *op;          /* ev_file's op (or the syscall's name) */
	const char *path;        /* the last object's; NULL: null */
	size_t nobjects;         /* several objects: each one's path and access (NULL: null) */
	const char *object_path[EV_LANDLOCK_OBJECTS], *object_access[EV_LANDLOCK_OBJECTS];
	const char *dev;
	bool has_ino;
	unsigned long long ino;
	/* net */
	const char *method;      /* "connect", "bind" or "unix" */
	const char *unix_path;   /* a unix socket's ("@..." abstract) */
	const char *address;     /* valid UTF-8 */
	int port;                /* -1: left out */
	/* signal */
	long to_pid, to_host_pid; /* the target inside (-1: not inside), on the host */
	const char *to_comm;
	const char *signal_name; /* "SIGTERM"; NULL: signal_nr, or left out when 0 */
	int signal_nr;
	/* all */
	const char *comm;        /* the refused process's command name */
	json_t *access;          /* the blockers, an array of strings (stolen) */
	bool has_domain;
	uint64_t domain;         /* written in hex */
};
struct event ev_landlock_denial(const struct ev_landlock_denial *x);

/* Landlock's denials not logged one by one (src/supervisor/llaudit.h):
 * by the rate limit or the session's cap (per kind), the socket's
 * overruns and the records the kernel itself lost. */
struct ev_landlock_suppressed {
	unsigned long file, net, signal; /* suppressed: their sum */
	unsigned long overruns, kernel_lost;
};
struct event ev_landlock_suppressed(const struct ev_landlock_suppressed *x);

/* Something the user should look at (alert.rule names which check). */
/* An alert. The git sweep's: rule, path, moved_to, action. A setuid or
 * setgid bit the sweep cleared: rule, path, action, mode_was, mode (octal
 * text). A secret's phantom seen where it does not belong: rule
 * "secret.phantom", secret, host, port, where ("url", "header", "body",
 * "stream"), action. A tool call's (src/control/hook.h, toollink.h): rule
 * "hook.refused" or "tool.intent-mismatch", action, path (a program),
 * tool (the call's id), reported. Fields left NULL (port 0) are left out. */
struct ev_alert {
	const char *rule, *path, *moved_to, *action;
	const char *mode_was, *mode;
	const char *secret, *host, *where;
	unsigned port;
	const char *tool;        /* the tool call it concerns (a tool event's id), or NULL */
	bool reported;           /* caused by what the sandbox reported (the hook socket):
				    "reported": true */
	const char *severity;    /* "low", "medium", "high", "critical"; NULL: left out (the
				    detector (src/detect/) rates it by its rule) */
	json_t *links;           /* the seqs of the events it links (borrowed); NULL: left out */
	const char *detail;      /* what the rule saw, in words; NULL: left out */
	unsigned long count;     /* a summary: how many alerts of the rule it stands for
				    (recbound.h); 0: left out, as is summary */
	const char *summary;     /* a summary's words */
};
struct event ev_alert(const struct ev_alert *x);

/* A signal sent to warden and passed on: to every process in the sandbox
 * (SIGINT, SIGTERM, SIGHUP: the grace period starts) or to the command. */
struct ev_signal {
	const char *signal;      /* "SIGTERM" */
	bool sandbox;            /* to every process, else to the command */
	long sender_pid;         /* the sender as the host sees it; 0: the kernel */
	unsigned grace_s;        /* sandbox: the grace period (written then only) */
};
struct event ev_signal(const struct ev_signal *x);

/* warden killed what was left of the sandbox (SIGKILL to its init). */
struct ev_kill {
	const char *reason;      /* "grace period over", "a second stopping signal (SIGINT)" */
	unsigned grace_s;
};
struct event ev_kill(const struct ev_kill *x);

/* The sandbox frozen, resumed or killed on request (src/supervisor/freeze.h),
 * or a warning given: by the control socket (`warden freeze`, ...), the
 * detector, a stopping signal to warden while frozen, or a freeze's
 * timeout. */
struct ev_action {
	const char *action;      /* "freeze", "resume", "kill", "warn" */
	const char *by;          /* "control", "detector", "signal", "timeout" */
	long uid;                /* the requester's uid; -1: left out */
	const char *reason;      /* NULL: left out */
	const char *how;         /* "cgroup" or "signals"; NULL: left out */
	unsigned processes;      /* signals: the processes signalled; 0: left out */
};
struct event ev_action(const struct ev_action *x);

/* A limit of the sandbox reached (src/sandbox/limits.h): kind "pids",
 * "memory", "tmp" or "home", the limit as a profile writes it, and what
 * happened. */
struct ev_limit {
	const char *kind, *limit, *detail;
};
struct event ev_limit(const struct ev_limit *x);

/* The detector's risk score crossed a threshold (src/detect/detect.h):
 * the score, the threshold's name ("warn", "ask", "freeze", "kill") and
 * value, and the alert's rule that made it cross. */
struct ev_risk {
	double score, threshold;
	const char *level, *rule;
};
struct event ev_risk(const struct ev_risk *x);

/* A question for a human (src/control/approval.h) and what became of it:
 * phase "asked" (put), "reviewed" (the reviewer handed it to the humans),
 * "answered", "remembered" (answered at once by an earlier answer's
 * scope), "timeout", "cancelled" (the asker went away) or "ended" (the
 * session ended first). */
struct ev_approval {
	const char *id, *kind, *phase;
	const char *subject, *summary;
	json_t *detail;          /* borrowed; NULL: left out */
	int decision;            /* 1 allow, 0 deny, -1 none (left out) */
	const char *by, *who;    /* the channel, and who on it; NULL: left out */
	const char *scope;       /* "once", "session", "pattern"; NULL: left out */
	const char *pattern;
	unsigned ttl_s;          /* 0: left out */
	const char *reason;
};
struct event ev_approval(const struct ev_approval *x);

/* A tool call an agent's hook reported (src/control/hook.h): phase "pre"
 * (asked before it runs: decision allow or deny, and the rule) or "post"
 * (it ran; no decision). Always "reported": true: the sandbox said so,
 * warden did not see it. id is warden's (exec and net events name it in
 * "tool"); session_id and tool_use_id are the agent's own. */
struct ev_tool {
	const char *id, *phase;
	const char *client;      /* "claude", "codex", or what the hook said; NULL: left out */
	const char *tool, *what;
	bool what_truncated;
	int decision;            /* 1 allow, 0 deny, -1 none (left out) */
	const char *rule;        /* the tool rule that decided ("tool deny Bash rm -rf * (FILE:LINE)"),
				    NULL: none matched (the default) */
	const char *reason;      /* why denied, or how a human answered; NULL: left out */
	const char *question;    /* the approval's id when a human was asked; NULL: left out */
	long pid;                /* the hook's process inside the sandbox; -1: unknown (left out) */
	const char *session_id, *tool_use_id; /* NULL: left out */
	const char *cwd;         /* NULL: left out */
};
struct event ev_tool(const struct ev_tool *x);

/* A request to the SSH agent socket inside (src/supervisor/sshagent_srv.h):
 * a signature made ("sign", decision allow) or refused, or another request
 * refused ("add", "remove", "lock", "extension", ...), with the key's
 * fingerprint and where the request says the signature goes. */
struct ev_ssh {
	const char *action;      /* "sign", "list", "add", ... */
	bool allowed;
	const char *key, *comment;   /* "SHA256:..." and its comment; NULL: left out */
	const char *host_key;    /* the server's key (session-bind), "SHA256:..."; NULL: left out */
	const char *user, *service;  /* a user authentication's; NULL: left out */
	const char *sig_namespace;   /* an SSHSIG signature's (git: "git"); NULL: left out */
	const char *extension;   /* an extension's name; NULL: left out */
	const char *reason;      /* why refused or failed; NULL: left out */
	const char *question;    /* the approval's id when a human was asked; NULL: left out */
};
struct event ev_ssh(const struct ev_ssh *x);

/* The first line of every log. */
struct ev_session_start {
	const char *version;
	char *const *argv;       /* NULL-terminated */
	const char *workspace;
	const char *policy_digest;
	char *const *profiles;   /* NULL-terminated */
	int uid;
	json_t *kernel;          /* the kernel features in force (stolen) */
	json_t *exposed;         /* host paths exposed for the client (stolen), NULL: [] */
	json_t *agent;           /* the agent profile in use (stolen), NULL: none */
	json_t *limits;          /* the limits in force (stolen), NULL: left out */
	json_t *exec;            /* the exec layout: strict mode, the allow-writable paths,
				    the hidden files (stolen), NULL: left out */
	json_t *host_id;         /* as root, the agent's own host uid and gid: {"uid", "gid"}
				    (stolen), NULL: left out */
	json_t *checkpoint;      /* the workspace's checkpoint: {"manifest": SHA256, counts,
				    "exclude", "excluded"} or {"off": true} (stolen), NULL:
				    left out */
	json_t *layout;          /* read-only or not, scratch, outputs, task
				    (src/session/layout.h) (stolen), NULL: left out */
	char *const *certificates; /* the masked *.pem read inside as a copy of their
				      certificates, workspace-relative (NULL-terminated;
				      NULL or empty: left out) */
	const char *sign_key;    /* the git signing key carried inside ("SHA256:...";
				    src/workspace/gitsign.h); NULL: none */
	bool sign_commit, sign_tag; /* ... and what git signs with it there */
	const char *sign_off;    /* why commits or tags made inside will not be signed
				    though the host's git signs them; NULL: left out */
};
struct event ev_session_start(const struct ev_session_start *x);

/* The last line: the command's exit status, or warden's error (exit 125). */
struct ev_session_end {
	int exit;
	const char *error;       /* non-NULL: warden failed (then no duration) */
	double duration_ms;
	json_t *counts;          /* events per kind (stolen) */
	json_t *exec;            /* the exec pipeline's counts (stolen; NULL: left out) */
	json_t *journald;        /* `--log journald`: {"sent": N, "dropped": N}, the entries
				    sent and lost before this one (stolen; NULL: left out) */
	json_t *syslog;          /* `--log syslog`: the same for syslog's messages */
	json_t *stream;          /* --stream: each target's figures (src/export/stream.h)
				    (stolen; NULL: left out) */
	json_t *checkpoint;      /* the workspace recorded at the end: {"manifest": SHA256}
				    or {"error": WHY} (stolen; NULL: left out) */
};
struct event ev_session_end(const struct ev_session_end *x);

/* Release an event that was not emitted. */
void event_discard(struct event *ev);
