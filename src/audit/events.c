/* events.c - the audit event format (see events.h): the session-id rule, the
 * header keys, and the constructors, one per kind of event, each giving its
 * fields in the order they are written. */
#include "events.h"

#include <stdio.h>
#include <string.h>

#include "../common/util.h"
#include "escape.h"

bool audit_session_id_valid(const char *s)
{
	if (!s)
		return false;
	size_t n = strlen(s);
	if (n == 0 || n > 200 || s[0] == '.')
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

const char *const audit_header_keys[6] = { "v", "ts", "session", "seq", "event", "prev" };

bool audit_is_header_key(const char *k)
{
	for (size_t i = 0; i < ARRAY_LEN(audit_header_keys); i++)
		if (strcmp(k, audit_header_keys[i]) == 0)
			return true;
	return false;
}

static const char *const kinds[] = {
	"exec", "net", "file", "syscall", "alert", "approval", "tool", "ssh", "mcp", "signal",
	"kill", "action", "limit", "risk", "session.start", "session.end", "syscall.suppressed",
	"landlock.suppressed",
};

size_t audit_event_kinds(const char *const **v)
{
	*v = kinds;
	return ARRAY_LEN(kinds);
}

bool audit_event_kind_known(const char *kind)
{
	for (size_t i = 0; kind && i < ARRAY_LEN(kinds); i++)
		if (strcmp(kinds[i], kind) == 0)
			return true;
	return false;
}

static struct event event_of(const char *kind, json_t *fields)
{
	return (struct event){ .kind = kind, .fields = fields };
}

void event_discard(struct event *ev)
{
	json_decref(ev->fields);
	ev->fields = NULL;
}

/* Set key in f to the NULL-terminated list v (escape.h). */
static void set_strv(json_t *f, const char *key, char *const *v, json_t **esc)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	json_set_bytes_array(f, key, v, n, esc);
}

/* The fields of the constructors below are packed with json_pack: a string
 * that is not UTF-8 makes the whole object NULL (an event without fields),
 * as the emitters have always done. */

/* An exec's interpreter and the loader's program, when there are. */
static void exec_runs(json_t *f, const struct ev_exec *x, json_t **esc)
{
	if (x->interpreter[0])
		json_set_bytes(f, "interpreter", x->interpreter, esc);
	if (x->interpreter_sha256)
		json_object_set_new(f, "interpreter_sha256", json_string(x->interpreter_sha256));
	if (x->interpreter_resolved)
		json_set_bytes(f, "interpreter_resolved", x->interpreter_resolved, esc);
	if (x->interpreter_code_sha256)
		json_object_set_new(f, "interpreter_code_sha256", json_string(x->interpreter_code_sha256));
	if (x->nscripts) {
		json_set_bytes_array(f, "interpreter_scripts", (char *const *)x->scripts, x->nscripts,
				     esc);
		json_t *h = json_array();
		for (size_t i = 0; i < x->nscripts; i++)
			json_array_append_new(h, x->scripts_sha256[i] ? json_string(x->scripts_sha256[i])
								   : json_null());
		json_object_set_new(f, "interpreter_scripts_sha256", h);
	}
	if (x->program) {
		json_set_bytes(f, "program", x->program, esc);
		json_set_bytes(f, "program_resolved", x->program_resolved, esc);
		json_object_set_new(f, "program_sha256",
				    x->program_sha256 ? json_string(x->program_sha256) : json_null());
		if (x->program_code_sha256)
			json_object_set_new(f, "program_code_sha256", json_string(x->program_code_sha256));
	}
	if (x->code_sha256)
		json_object_set_new(f, "code_sha256", json_string(x->code_sha256));
	if (x->code_missing)
		json_object_set_new(f, "code_hash_missing", json_string(x->code_missing));
}

/* An exec's decision, and what else is said of it. */
static void exec_decision(json_t *f, const struct ev_exec *x)
{
	json_object_set_new(f, "decision", json_string(x->deny ? "deny" : "allow"));
	if (x->deny)
		json_object_set_new(f, "reason", json_string(x->deny));
	if (x->argv_truncated)
		json_object_set_new(f, "argv_truncated", json_true());
	if (x->tool)
		json_object_set_new(f, "tool", json_string(x->tool));
	if (x->kernel_hook) {
		json_object_set_new(f, "enforced_by", json_string("bpf-lsm"));
		json_object_set_new(f, "hook", json_string(x->kernel_hook));
	}
}

/* The strings an exec carries come from the agent: any bytes, kept
 * losslessly (escape.h). */
struct event ev_exec(const struct ev_exec *x)
{
	json_t *esc = NULL;
	json_t *f = json_pack("{s:I, s:I, s:I, s:s}", "pid", (json_int_t)x->pid, "ppid",
			      (json_int_t)x->ppid, "host_pid", (json_int_t)x->host_pid, "syscall",
			      x->syscall ? x->syscall : x->execveat ? "execveat" : "execve");
	/* "" is no directory nor file: one warden could not name (deeper
	 * than PATH_MAX, the process gone) is null, as one not looked up */
	json_set_bytes(f, "cwd", x->cwd && x->cwd[0] ? x->cwd : NULL, &esc);
	json_set_bytes(f, "path", x->path, &esc);
	if (f)
		json_object_set(f, "argv", x->argv ? x->argv : json_array());
	json_decref(x->argv);
	if (!f)
		return event_of("exec", NULL);
	if (x->argv_escaped) {
		if (!esc)
			esc = json_array();
		json_array_append_new(esc, json_string("argv"));
	}
	json_set_bytes(f, "resolved", x->resolved && x->resolved[0] ? x->resolved : NULL, &esc);
	json_object_set_new(f, "sha256", x->sha256 ? json_string(x->sha256) : json_null());
	if (!x->sha256 && x->hash_missing)
		json_object_set_new(f, "hash_missing", json_string(x->hash_missing));
	if (x->swapped)
		json_object_set_new(f, "swapped", json_true());
	if (x->writable)
		json_object_set_new(f, "writable", json_true());
	exec_runs(f, x, &esc);
	exec_decision(f, x);
	if (esc)
		json_object_set(f, "escaped", esc);
	json_decref(esc);
	return event_of("exec", f);
}

struct event ev_net_connect(const struct ev_net_connect *x)
{
	return event_of("net", json_pack("{s:I, s:I, s:s, s:s, s:i, s:s, s:s}",
		"pid", (json_int_t)x->pid, "host_pid", (json_int_t)x->host_pid,
		"method", x->method ? x->method : "connect",
		"address", x->address, "port", (int)x->port, "decision", "deny",
		"reason", x->reason ? x->reason : "direct connection: the sandbox has no route out"));
}

struct event ev_net_summary(const struct ev_net_summary *x)
{
	return event_of("net", json_pack("{s:s, s:s, s:I, s:b, s:s}", "method", "summary",
		"decision", "deny", "count", (json_int_t)x->count, "new", x->new_dests,
		"summary", x->summary));
}

struct event ev_net_unix(const struct ev_net_unix *x)
{
	json_t *esc = NULL;
	json_t *f = json_pack("{s:I, s:I, s:s}", "pid", (json_int_t)x->pid, "host_pid",
			      (json_int_t)x->host_pid, "method", "unix");
	json_set_bytes(f, "path", x->path, &esc);
	json_set_bytes(f, "resolved", x->resolved && x->resolved[0] ? x->resolved : NULL, &esc);
	if (f) {
		json_object_set_new(f, "decision", json_string("deny"));
		json_object_set_new(f, "reason", json_string("a unix socket of the host"));
		if (esc)
			json_object_set(f, "escaped", esc);
	}
	json_decref(esc);
	return event_of("net", f);
}

struct event ev_net_proxy(const struct ev_net_proxy *x)
{
	json_t *f = json_pack("{s:s, s:s, s:i, s:s?, s:s, s:I, s:I, s:f, s:s}",
		"method", x->method, "host", x->host, "port", (int)x->port,
		"address", x->address[0] ? x->address : NULL,
		"via", x->loopback ? "loopback" : x->socks ? "socks5" : "http",
		"bytes_out", (json_int_t)x->bytes_out, "bytes_in", (json_int_t)x->bytes_in,
		"duration_ms", x->duration_ms, "decision", x->allowed ? "allow" : "deny");
	if (!f)
		return event_of("net", NULL);
	if (x->status)
		json_object_set_new(f, "status", json_integer(x->status));
	if (x->rule[0])
		json_object_set_new(f, "rule", json_string(x->rule));
	if (x->reason[0])
		json_object_set_new(f, "reason", json_string(x->reason));
	if (x->intercepted) {
		json_object_set_new(f, "intercepted", json_true());
		json_object_set_new(f, "requests", json_integer(x->requests));
		json_object_set_new(f, "secrets", x->secrets ? x->secrets : json_array());
	} else if (x->secrets) {
		json_decref(x->secrets);
	}
	if (x->tool)
		json_object_set_new(f, "tool", json_string(x->tool));
	if (x->program) {
		json_object_set_new(f, "program", json_string(x->program));
		json_object_set_new(f, "program_pid", json_integer(x->program_pid));
		if (x->program_sha256 && x->program_sha256[0])
			json_object_set_new(f, "program_sha256", json_string(x->program_sha256));
	} else if (x->program_unknown) {
		json_object_set_new(f, "program_unknown", json_string(x->program_unknown));
	}
	if (x->path && x->path[0])
		json_object_set_new(f, "path", json_string(x->path));
	return event_of("net", f);
}

struct event ev_mcp(const struct ev_mcp *x)
{
	json_t *f = json_pack("{s:s, s:i, s:s}", "host", x->host, "port", (int)x->port, "decision",
			      x->allowed ? "allow" : "deny");
	if (f && x->method[0])
		json_object_set_new(f, "mcp_method", json_string(x->method));
	if (f && x->tool[0])
		json_object_set_new(f, "mcp_tool", json_string(x->tool));
	if (f && x->asked)
		json_object_set_new(f, "asked", json_true());
	if (f && x->rule[0])
		json_object_set_new(f, "rule", json_string(x->rule));
	if (f && x->reason[0])
		json_object_set_new(f, "reason", json_string(x->reason));
	return event_of("mcp", f);
}

struct event ev_net_inbound(const struct ev_net_inbound *x)
{
	json_t *f = json_pack("{s:s, s:s, s:s, s:i, s:i, s:s, s:s?, s:I, s:I, s:f, s:s}",
		"method", "tcp", "direction", "inbound", "via", "publish",
		"host_port", (int)x->host_port, "port", (int)x->port, "peer", x->peer,
		"address", x->address, "bytes_in", (json_int_t)x->bytes_in,
		"bytes_out", (json_int_t)x->bytes_out, "duration_ms", x->duration_ms,
		"decision", "allow");
	if (f && x->error)
		json_object_set_new(f, "error", json_string(x->error));
	return event_of("net", f);
}

/* A summary's fields: count, summary, repeats and unkept, ops. */
static void file_summary(json_t *f, const struct ev_file *x)
{
	if (x->has_count)
		json_object_set_new(f, "count", json_integer((json_int_t)x->count));
	if (x->summary)
		json_object_set_new(f, "summary", json_string(x->summary));
	if (x->has_repeats) {
		json_object_set_new(f, "repeats", json_integer((json_int_t)x->repeats));
		json_object_set_new(f, "unkept", json_integer((json_int_t)(x->count - x->repeats)));
	}
	json_t *ops = x->nkinds ? json_object() : NULL;
	for (size_t i = 0; ops && i < x->nkinds; i++)
		if (x->kind_counts[i])
			json_object_set_new(ops, x->kind_names[i],
					    json_integer((json_int_t)x->kind_counts[i]));
	if (ops)
		json_object_set_new(f, "ops", ops);
}

struct event ev_file(const struct ev_file *x)
{
	static const char *const keys[2] = { "path", "path2" };
	json_t *f = json_pack("{s:I, s:s}", "pid", (json_int_t)x->pid, "op", x->op);
	if (f && x->syscall) /* a summary has none */
		json_object_set_new(f, "syscall", json_string(x->syscall));
	json_t *esc = NULL;
	for (int i = 0; f && i < x->npaths && i < 2; i++)
		json_set_bytes(f, keys[i], x->paths[i], &esc);
	if (f && x->has_flags)
		json_object_set_new(f, "flags", json_sprintf("0x%llx", x->flags));
	if (f && x->decision)
		json_object_set_new(f, "decision", json_string(x->decision));
	if (f && x->reason)
		json_set_bytes(f, "reason", x->reason, &esc);
	if (f && x->target)
		json_set_bytes(f, "target", x->target, &esc);
	if (f && x->attr)
		json_set_bytes(f, "attr", x->attr, &esc);
	if (f && x->access)
		json_object_set_new(f, "access", json_string(x->access));
	if (f && x->new_repo)
		json_object_set_new(f, "new_repo", json_true());
	if (f && x->links)
		json_object_set_new(f, "nlink", json_integer((json_int_t)x->links));
	if (f)
		file_summary(f, x);
	static const char *const partial[2] = { "path_partial", "path2_partial" };
	for (int i = 0; f && i < x->npaths && i < 2; i++)
		if (x->partial[i])
			json_object_set_new(f, partial[i], json_true());
	if (f && esc)
		json_object_set(f, "escaped", esc);
	json_decref(esc);
	return event_of("file", f);
}

struct event ev_syscall(const struct ev_syscall *x)
{
	json_t *args = json_array();
	for (int i = 0; i < 6; i++) {
		char hex[24];
		snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)x->args[i]);
		json_array_append_new(args, json_string(hex));
	}
	json_t *f = json_pack("{s:I, s:I, s:s, s:i, s:o, s:s, s:s?, s:s?}",
		"pid", (json_int_t)x->pid, "host_pid", (json_int_t)x->host_pid,
		"name", x->name ? x->name : "?", "nr", x->nr, "args", args,
		"decision", x->ignored ? "ignore" : "deny", "errno", x->ignored ? NULL : "EPERM",
		"abi", x->abi);
	json_t *esc = NULL;
	if (f && x->path)
		json_set_bytes(f, "path", x->path, &esc);
	if (f && x->reason)
		json_object_set_new(f, "reason", json_string(x->reason));
	if (f && esc)
		json_object_set(f, "escaped", esc);
	json_decref(esc);
	return event_of("syscall", f);
}

struct event ev_syscall_suppressed(unsigned long suppressed)
{
	return event_of("syscall.suppressed", json_pack("{s:I}", "suppressed", (json_int_t)suppressed));
}

/* An alert's path may be any bytes (a name in the workspace): kept
 * losslessly (escape.h). */
/* The object of a Landlock denial of a file: the path (the last
 * object's), each object when there are several, the device and inode. */
static void landlock_file(json_t *f, const struct ev_landlock_denial *x, json_t **esc)
{
	json_object_set_new(f, "op", json_string(x->op));
	json_set_bytes(f, "path", x->path, esc);
	if (x->nobjects) {
		json_t *objs = json_array();
		for (size_t i = 0; i < x->nobjects && i < EV_LANDLOCK_OBJECTS; i++) {
			json_t *o = json_object();
			json_t *oesc = NULL;
			json_set_bytes(o, "path", x->object_path[i], &oesc);
			json_set_bytes(o, "access", x->object_access[i], &oesc);
			if (oesc)
				json_object_set_new(o, "escaped", oesc);
			json_array_append_new(objs, o);
		}
		json_object_set_new(f, "objects", objs);
	}
	if (x->dev)
		json_set_bytes(f, "dev", x->dev, esc);
	if (x->has_ino)
		json_object_set_new(f, "ino", json_integer((json_int_t)x->ino));
}

/* ... of a connection: how, and to or from where */
static void landlock_net(json_t *f, const struct ev_landlock_denial *x, json_t **esc)
{
	json_object_set_new(f, "method", json_string(x->method));
	if (x->unix_path)
		json_set_bytes(f, "path", x->unix_path, esc);
	if (x->address)
		json_object_set_new(f, "address", json_string(x->address));
	if (x->port >= 0)
		json_object_set_new(f, "port", json_integer(x->port));
}

/* ... of a signal: the target and the signal */
static void landlock_signal(json_t *f, const struct ev_landlock_denial *x, json_t **esc)
{
	json_object_set_new(f, "to_pid", json_integer(x->to_pid));
	json_object_set_new(f, "to_host_pid", json_integer(x->to_host_pid));
	if (x->to_comm)
		json_set_bytes(f, "to_comm", x->to_comm, esc);
	if (x->signal_name)
		json_object_set_new(f, "signal", json_string(x->signal_name));
	else if (x->signal_nr > 0)
		json_object_set_new(f, "signal", json_integer(x->signal_nr));
}

/* A file's blockers summed up in the word other `file` events' access
 * holds, appended: "read" (fs.read_file, fs.read_dir), "execute"
 * (fs.execute), else "write"; so that a rule on access=read finds a read
 * Landlock refused. */
static void landlock_access_word(json_t *access)
{
	bool read = false, exec = false, write = false;
	size_t i;
	json_t *v;
	json_array_foreach(access, i, v) {
		const char *b = json_string_value(v);
		if (!b)
			continue;
		if (strncmp(b, "fs.read_", 8) == 0)
			read = true;
		else if (strcmp(b, "fs.execute") == 0)
			exec = true;
		else if (strncmp(b, "fs.", 3) == 0)
			write = true;
	}
	if (write)
		json_array_append_new(access, json_string("write"));
	if (read)
		json_array_append_new(access, json_string("read"));
	if (exec)
		json_array_append_new(access, json_string("execute"));
}

struct event ev_landlock_denial(const struct ev_landlock_denial *x)
{
	const char *kind = strcmp(x->kind, "file") == 0 ? "file"
			   : strcmp(x->kind, "net") == 0 ? "net" : "signal";
	json_t *esc = NULL;
	json_t *f = json_object();
	json_object_set_new(f, "pid", json_integer(x->pid));
	json_object_set_new(f, "host_pid", json_integer(x->host_pid));
	json_object_set_new(f, "syscall", x->syscall ? json_string(x->syscall)
				: x->has_syscall_nr ? json_sprintf("%llu", x->syscall_nr) : json_null());
	if (kind[0] == 'f')
		landlock_file(f, x, &esc);
	else if (kind[0] == 'n')
		landlock_net(f, x, &esc);
	else
		landlock_signal(f, x, &esc);
	if (x->comm)
		json_set_bytes(f, "comm", x->comm, &esc);
	json_t *access = x->access ? x->access : json_array();
	if (kind[0] == 'f')
		landlock_access_word(access);
	json_object_set_new(f, "access", access);
	json_object_set_new(f, "decision", json_string("deny"));
	json_object_set_new(f, "by", json_string("landlock"));
	if (kind[0] == 'f')
		json_object_set_new(f, "reason", json_string("landlock"));
	if (x->has_domain)
		json_object_set_new(f, "domain", json_sprintf("%llx", (unsigned long long)x->domain));
	if (esc)
		json_object_set(f, "escaped", esc);
	json_decref(esc);
	return event_of(kind, f);
}

struct event ev_landlock_suppressed(const struct ev_landlock_suppressed *x)
{
	return event_of("landlock.suppressed", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}",
		"suppressed", (json_int_t)(x->file + x->net + x->signal),
		"file", (json_int_t)x->file, "net", (json_int_t)x->net,
		"signal", (json_int_t)x->signal, "overruns", (json_int_t)x->overruns,
		"kernel_lost", (json_int_t)x->kernel_lost));
}

struct event ev_alert(const struct ev_alert *x)
{
	json_t *esc = NULL;
	json_t *f = json_pack("{s:s}", "rule", x->rule);
	const char *const keys[] = { "path", "moved_to", "action", "mode_was", "mode", "secret",
				     "host", "where" };
	const char *const vals[] = { x->path, x->moved_to, x->action, x->mode_was, x->mode, x->secret,
				     x->host, x->where };
	for (size_t i = 0; f && i < ARRAY_LEN(keys); i++)
		json_set_bytes(f, keys[i], vals[i], &esc);
	if (f) {
		/* s:s? writes null for NULL: leave those out */
		const char *k;
		json_t *v;
		void *tmp;
		json_object_foreach_safe(f, tmp, k, v)
			if (json_is_null(v))
				json_object_del(f, k);
		if (x->port)
			json_object_set_new(f, "port", json_integer(x->port));
		if (x->tool)
			json_object_set_new(f, "tool", json_string(x->tool));
		if (x->reported)
			json_object_set_new(f, "reported", json_true());
		if (x->severity)
			json_object_set_new(f, "severity", json_string(x->severity));
		if (x->links)
			json_object_set(f, "links", x->links);
		if (x->detail)
			json_object_set_new(f, "detail", json_string(x->detail));
		if (x->count) {
			json_object_set_new(f, "count", json_integer((json_int_t)x->count));
			json_object_set_new(f, "summary", json_string(x->summary ? x->summary : ""));
		}
		if (esc)
			json_object_set(f, "escaped", esc);
	}
	json_decref(esc);
	return event_of("alert", f);
}

struct event ev_signal(const struct ev_signal *x)
{
	json_t *f = json_pack("{s:s, s:s, s:I}", "signal", x->signal,
			      "to", x->sandbox ? "sandbox" : "command",
			      "sender_pid", (json_int_t)x->sender_pid);
	if (f && x->sandbox)
		json_object_set_new(f, "grace_s", json_integer(x->grace_s));
	return event_of("signal", f);
}

struct event ev_kill(const struct ev_kill *x)
{
	return event_of("kill", json_pack("{s:s, s:s, s:s, s:I}", "signal", "SIGKILL",
		"to", "sandbox", "reason", x->reason, "grace_s", (json_int_t)x->grace_s));
}

struct event ev_risk(const struct ev_risk *x)
{
	return event_of("risk", json_pack("{s:f, s:s, s:f, s:s}", "score", x->score, "level", x->level,
					  "threshold", x->threshold, "rule", x->rule ? x->rule : ""));
}

struct event ev_action(const struct ev_action *x)
{
	json_t *f = json_pack("{s:s, s:s}", "action", x->action, "by", x->by);
	json_t *esc = NULL;
	if (f && x->uid >= 0)
		json_object_set_new(f, "uid", json_integer(x->uid));
	if (f && x->reason)
		json_set_bytes(f, "reason", x->reason, &esc);
	if (f && x->how)
		json_object_set_new(f, "how", json_string(x->how));
	if (f && x->processes)
		json_object_set_new(f, "processes", json_integer(x->processes));
	if (f && esc)
		json_object_set(f, "escaped", esc);
	json_decref(esc);
	return event_of("action", f);
}

struct event ev_approval(const struct ev_approval *x)
{
	json_t *f = json_pack("{s:s, s:s, s:s}", "id", x->id, "kind", x->kind, "phase", x->phase);
	json_t *esc = NULL;
	if (f && x->subject)
		json_set_bytes(f, "subject", x->subject, &esc);
	if (f && x->summary)
		json_set_bytes(f, "summary", x->summary, &esc);
	if (f && x->detail)
		json_object_set(f, "detail", x->detail);
	if (f && x->decision >= 0)
		json_object_set_new(f, "decision", json_string(x->decision ? "allow" : "deny"));
	if (f && x->by)
		json_object_set_new(f, "by", json_string(x->by));
	if (f && x->who)
		json_set_bytes(f, "who", x->who, &esc);
	if (f && x->scope)
		json_object_set_new(f, "scope", json_string(x->scope));
	if (f && x->pattern)
		json_set_bytes(f, "pattern", x->pattern, &esc);
	if (f && x->ttl_s)
		json_object_set_new(f, "ttl_s", json_integer(x->ttl_s));
	if (f && x->reason)
		json_set_bytes(f, "reason", x->reason, &esc);
	if (f && esc)
		json_object_set(f, "escaped", esc);
	json_decref(esc);
	return event_of("approval", f);
}

struct event ev_tool(const struct ev_tool *x)
{
	json_t *f = json_pack("{s:s, s:s}", "id", x->id, "phase", x->phase);
	json_t *esc = NULL;
	if (f && x->client)
		json_set_bytes(f, "client", x->client, &esc);
	if (f) {
		json_set_bytes(f, "tool", x->tool ? x->tool : "", &esc);
		json_set_bytes(f, "what", x->what ? x->what : "", &esc);
	}
	if (f && x->what_truncated)
		json_object_set_new(f, "what_truncated", json_true());
	if (f && x->decision >= 0)
		json_object_set_new(f, "decision", json_string(x->decision ? "allow" : "deny"));
	if (f && x->decision >= 0)
		json_object_set_new(f, "rule", x->rule ? json_string(x->rule) : json_null());
	if (f && x->reason)
		json_set_bytes(f, "reason", x->reason, &esc);
	if (f && x->question)
		json_object_set_new(f, "question", json_string(x->question));
	if (f)
		json_object_set_new(f, "reported", json_true());
	if (f && x->pid >= 0)
		json_object_set_new(f, "pid", json_integer(x->pid));
	if (f && x->session_id)
		json_set_bytes(f, "session_id", x->session_id, &esc);
	if (f && x->tool_use_id)
		json_set_bytes(f, "tool_use_id", x->tool_use_id, &esc);
	if (f && x->cwd)
		json_set_bytes(f, "cwd", x->cwd, &esc);
	if (f && esc)
		json_object_set(f, "escaped", esc);
	json_decref(esc);
	return event_of("tool", f);
}

struct event ev_limit(const struct ev_limit *x)
{
	return event_of("limit", json_pack("{s:s, s:s, s:s}", "kind", x->kind, "limit", x->limit,
					   "detail", x->detail));
}

struct event ev_ssh(const struct ev_ssh *x)
{
	json_t *f = json_pack("{s:s, s:s}", "action", x->action, "decision",
			      x->allowed ? "allow" : "deny");
	json_t *esc = NULL;
	const struct { const char *name, *v; } opt[] = {
		{ "key", x->key }, { "comment", x->comment }, { "host_key", x->host_key },
		{ "user", x->user }, { "service", x->service }, { "namespace", x->sig_namespace },
		{ "extension", x->extension }, { "reason", x->reason }, { "question", x->question },
	};
	for (size_t i = 0; f && i < ARRAY_LEN(opt); i++)
		if (opt[i].v)
			json_set_bytes(f, opt[i].name, opt[i].v, &esc);
	if (f && esc)
		json_object_set(f, "escaped", esc);
	json_decref(esc);
	return event_of("ssh", f);
}

/* The argv, the workspace and the profiles' paths are any bytes: kept
 * losslessly (escape.h), as `warden diff` and `undo` find the session's
 * checkpoint by its workspace. */
struct event ev_session_start(const struct ev_session_start *x)
{
	json_t *esc = NULL;
	json_t *j = json_pack("{s:s}", "version", x->version);
	set_strv(j, "argv", x->argv, &esc);
	json_set_bytes(j, "workspace", x->workspace, &esc);
	json_object_set_new(j, "policy_digest", json_string(x->policy_digest));
	set_strv(j, "profiles", x->profiles, &esc);
	json_object_set_new(j, "uid", json_integer(x->uid));
	json_object_set_new(j, "kernel", x->kernel);
	json_object_set_new(j, "exposed", x->exposed ? x->exposed : json_array());
	const char *const keys[] = { "agent", "limits", "exec", "host_id", "checkpoint", "layout" };
	json_t *const vals[] = { x->agent, x->limits, x->exec, x->host_id, x->checkpoint, x->layout };
	for (size_t i = 0; i < ARRAY_LEN(keys); i++)
		if (vals[i])
			json_object_set_new(j, keys[i], vals[i]);
	if (x->certificates && x->certificates[0])
		set_strv(j, "certificates", x->certificates, &esc);
	if (x->sign_key)
		json_object_set_new(j, "git_signing", json_pack("{s:s, s:b, s:b}", "key", x->sign_key,
								"commit", x->sign_commit, "tag",
								x->sign_tag));
	else if (x->sign_off)
		json_object_set_new(j, "git_signing", json_pack("{s:b, s:s}", "off", true, "why",
								x->sign_off));
	if (esc)
		json_object_set_new(j, "escaped", esc);
	return event_of("session.start", j);
}

struct event ev_session_end(const struct ev_session_end *x)
{
	json_t *j = x->error ? json_pack("{s:i, s:s, s:o}", "exit", x->exit, "error", x->error,
					 "counts", x->counts)
			     : json_pack("{s:i, s:f, s:o}", "exit", x->exit, "duration_ms",
					 x->duration_ms, "counts", x->counts);
	if (j && x->exec)
		json_object_set(j, "exec", x->exec);
	json_decref(x->exec);
	if (j && x->journald)
		json_object_set(j, "journald", x->journald);
	json_decref(x->journald);
	if (j && x->syslog)
		json_object_set(j, "syslog", x->syslog);
	json_decref(x->syslog);
	if (j && x->stream)
		json_object_set(j, "stream", x->stream);
	json_decref(x->stream);
	if (j && x->checkpoint)
		json_object_set(j, "checkpoint", x->checkpoint);
	json_decref(x->checkpoint);
	return event_of("session.end", j);
}
