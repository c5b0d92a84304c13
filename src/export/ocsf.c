/* ocsf.c - warden's audit events mapped to OCSF 1.3.0 classes (ocsf.h).
 * The field types of a parsed line are checked here, not assumed: a line
 * whose fields are not what warden writes still maps to a valid event
 * (what does not fit is left to "unmapped"). */
#include "ocsf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../audit/times.h"

enum {
	SEV_INFO = 1, SEV_LOW = 2, SEV_MEDIUM = 3, SEV_HIGH = 4, SEV_CRITICAL = 5,
	ACTION_UNKNOWN = 0, ACTION_ALLOWED = 1, ACTION_DENIED = 2,
	DISP_UNKNOWN = 0, DISP_ALLOWED = 1, DISP_BLOCKED = 2,
};

static const char *str(json_t *ev, const char *k)
{
	return json_string_value(json_object_get(ev, k));
}

static bool has_int(json_t *ev, const char *k, json_int_t *v)
{
	json_t *j = json_object_get(ev, k);
	if (!json_is_integer(j))
		return false;
	*v = json_integer_value(j);
	return true;
}

static void set_str(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, json_string(v));
}

/* s is an OCSF hostname_t: dot-separated labels of ASCII letters, digits
 * and '-', none empty, none starting or ending with '-'. */
static bool is_hostname(const char *s)
{
	size_t n = 0; /* the current label's length */
	char prev = '.';
	for (const char *p = s; p; p++) {
		char ch = *p;
		if (ch == '.' || ch == '\0') {
			if (n == 0 || prev == '-')
				return false;
			if (ch == '\0')
				return true;
			n = 0;
		} else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
			   (ch == '-' && n > 0)) {
			n++;
		} else {
			return false;
		}
		prev = ch;
	}
	return false;
}

/* A name as hostname when it is an OCSF hostname_t, else as name (an
 * endpoint's, a device's: a free string). */
static void set_host(json_t *o, const char *v)
{
	if (v)
		set_str(o, is_hostname(v) ? "hostname" : "name", v);
}

/* metadata.profiles: an OCSF profile whose attributes the event uses. */
static void add_profile(json_t *o, const char *name)
{
	json_t *md = json_object_get(o, "metadata");
	json_t *p = json_object_get(md, "profiles");
	if (!p) {
		p = json_array();
		json_object_set_new(md, "profiles", p);
	}
	json_array_append_new(p, json_string(name));
}

/* The base attributes. */
static json_t *base(json_t *ev, const struct ocsf_ctx *c, int category, int cls, int activity,
		    int severity)
{
	struct audit_time t = { 0 };
	const char *ts = str(ev, "ts");
	audit_parse_ts(ts, &t);
	json_int_t seq = 0;
	has_int(ev, "seq", &seq);
	const char *session = str(ev, "session");
	json_t *md = json_pack("{s:s, s:{s:s, s:s, s:s}, s:s, s:s, s:s}", "version", OCSF_VERSION,
		"product", "name", "warden", "vendor_name", "warden", "version", c->product_version,
		"log_name", "warden audit log", "correlation_uid", session ? session : "",
		"original_time", ts ? ts : "");
	json_object_set_new(md, "uid", json_sprintf("%s:%lld", session ? session : "", (long long)seq));
	json_t *o = json_pack("{s:i, s:i, s:i, s:I, s:i, s:I, s:o}", "category_uid", category,
		"class_uid", cls, "activity_id", activity,
		"type_uid", (json_int_t)cls * 100 + activity, "severity_id", severity,
		"time", (json_int_t)t.sec * 1000 + t.nsec / 1000000, "metadata", md);
	/* the event as warden wrote it, but the chain's own bookkeeping */
	json_t *un = json_deep_copy(ev);
	json_object_del(un, "prev");
	json_object_set_new(o, "unmapped", un);
	return o;
}

/* The decision, as action_id and disposition_id (the security_control
 * profile's); the severity a refusal is given. */
static int decide(json_t *o, json_t *ev)
{
	const char *d = str(ev, "decision");
	if (!d)
		return SEV_INFO;
	add_profile(o, "security_control");
	if (strcmp(d, "unknown") == 0) { /* a file operation no wall was judged on */
		json_object_set_new(o, "action_id", json_integer(ACTION_UNKNOWN));
		json_object_set_new(o, "disposition_id", json_integer(DISP_UNKNOWN));
		return SEV_LOW;
	}
	bool deny = strcmp(d, "allow") != 0;
	json_object_set_new(o, "action_id", json_integer(deny ? ACTION_DENIED : ACTION_ALLOWED));
	json_object_set_new(o, "disposition_id", json_integer(deny ? DISP_BLOCKED : DISP_ALLOWED));
	return deny ? SEV_MEDIUM : SEV_INFO;
}

static json_t *device(const struct ocsf_ctx *c)
{
	/* type_id 0: Unknown (the host's kind is not warden's to say) */
	json_t *d = json_pack("{s:i}", "type_id", 0);
	if (c->hostname)
		set_host(d, c->hostname);
	else /* OCSF: a device has a name, hostname, ip or uid */
		set_str(d, "name", "unknown");
	return d;
}

/* actor.process: the process inside the sandbox that did it. OCSF wants
 * a process object to have a pid (or uid): without one (a line warden did
 * not write) the actor is only named, as app_name (its comm, else
 * "unknown"). */
static json_t *actor(json_t *ev)
{
	json_int_t pid;
	const char *comm = str(ev, "comm");
	if (!has_int(ev, "pid", &pid) || pid < 0)
		return json_pack("{s:s}", "app_name", comm ? comm : "unknown");
	json_t *p = json_pack("{s:I}", "pid", pid);
	set_str(p, "name", comm);
	return json_pack("{s:o}", "process", p);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

/* An OCSF file object for path (type_id 0, Unknown: a path, not a stat). */
static json_t *file_obj(const char *path, const char *sha256)
{
	json_t *f = json_pack("{s:s, s:s, s:i}", "path", path, "name", base_name(path), "type_id", 0);
	if (sha256) /* algorithm_id 3: SHA-256 */
		json_object_set_new(f, "hashes", json_pack("[{s:i, s:s}]", "algorithm_id", 3, "value", sha256));
	return f;
}

static json_t *process_activity(json_t *ev, const struct ocsf_ctx *c)
{
	const char *sys = str(ev, "syscall");
	bool launch = !sys || strncmp(sys, "exec", 4) == 0;
	json_t *o = base(ev, c, 1, 1007, launch ? 1 : 99, SEV_INFO);
	if (!launch)
		set_str(o, "activity_name", "Map Executable");
	json_object_set_new(o, "severity_id", json_integer(decide(o, ev)));
	json_t *p = json_object();
	json_int_t v;
	if (has_int(ev, "pid", &v) && v >= 0)
		json_object_set_new(p, "pid", json_integer(v));
	else /* OCSF: a pid or a uid; the event's own uid stands in */
		json_object_set(p, "uid", json_object_get(json_object_get(o, "metadata"), "uid"));
	json_t *argv = json_object_get(ev, "argv");
	if (json_is_array(argv)) {
		/* cmd_line: the arguments joined by spaces, as a display */
		size_t i;
		json_t *a;
		char *line = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&line, &len);
		json_array_foreach(argv, i, a)
			if (m && json_is_string(a))
				fprintf(m, "%s%s", i ? " " : "", json_string_value(a));
		if (m && fclose(m) == 0 && line) {
			json_object_set_new(p, "cmd_line", json_string(line));
			const char *nm = json_string_value(json_array_get(argv, 0));
			set_str(p, "name", nm ? base_name(nm) : NULL);
		}
		free(line);
	}
	const char *path = str(ev, "resolved") ? str(ev, "resolved") : str(ev, "path");
	if (path)
		json_object_set_new(p, "file", file_obj(path, str(ev, "sha256")));
	/* the actor: the parent, which made the exec */
	if (has_int(ev, "ppid", &v) && v >= 0) {
		json_t *parent = json_pack("{s:I}", "pid", v);
		json_object_set(p, "parent_process", parent);
		json_object_set_new(o, "actor", json_pack("{s:o}", "process", parent));
	} else {
		json_object_set_new(o, "actor", json_pack("{s:s}", "app_name", "unknown"));
	}
	json_object_set_new(o, "process", p);
	json_object_set_new(o, "device", device(c));
	set_str(o, "status_detail", str(ev, "reason"));
	return o;
}

static json_t *network_activity(json_t *ev, const struct ocsf_ctx *c)
{
	const char *d = str(ev, "decision");
	bool allow = d && strcmp(d, "allow") == 0;
	json_t *o = base(ev, c, 4, 4001, allow ? 6 : 5, SEV_INFO);
	add_profile(o, "host"); /* actor and device: the host profile's in Network Activity */
	json_object_set_new(o, "severity_id", json_integer(decide(o, ev)));
	json_t *dst = json_object();
	const char *method = str(ev, "method");
	bool unix_sock = method && strcmp(method, "unix") == 0;
	if (unix_sock) {
		set_str(dst, "name", str(ev, "path"));
	} else {
		set_host(dst, str(ev, "host"));
		set_str(dst, "ip", str(ev, "address"));
		json_int_t port;
		if (has_int(ev, "port", &port) && port >= 0 && port <= 65535)
			json_object_set_new(dst, "port", json_integer(port));
	}
	if (json_object_size(dst) == 0) /* a Landlock refusal that named no address */
		set_str(dst, "name", method ? method : "unknown");
	json_object_set_new(o, "dst_endpoint", dst);
	/* direction_id 2: Outbound; 1: Inbound, from the host's client to a
	 * published port (src/supervisor/publish.h) */
	const char *dir = str(ev, "direction");
	bool inbound = dir && strcmp(dir, "inbound") == 0;
	json_object_set_new(o, "src_endpoint", json_pack("{s:s}", "name",
		inbound && str(ev, "peer") ? str(ev, "peer") : "warden sandbox"));
	json_t *ci = json_pack("{s:i}", "direction_id", inbound ? 1 : 2);
	if (!unix_sock)
		set_str(ci, "protocol_name", method && strcmp(method, "sendto") == 0 ? "udp" : "tcp");
	json_object_set_new(o, "connection_info", ci);
	json_int_t in, out;
	if (has_int(ev, "bytes_in", &in) && has_int(ev, "bytes_out", &out))
		json_object_set_new(o, "traffic", json_pack("{s:I, s:I, s:I}", "bytes_in", in, "bytes_out", out,
							    "bytes", in + out));
	json_object_set_new(o, "actor", actor(ev));
	json_object_set_new(o, "device", device(c));
	set_str(o, "status_detail", str(ev, "reason"));
	return o;
}

static json_t *file_activity(json_t *ev, const struct ocsf_ctx *c)
{
	static const struct {
		const char *op;
		int activity;
	} ops[] = { { "open", 14 }, { "unlink", 4 }, { "rename", 5 }, { "link", 1 }, { "symlink", 1 },
		    { "mkdir", 1 }, { "mknod", 1 }, { "truncate", 3 }, { "read", 2 },
		    /* a file's times and extended attributes: Set Attributes; its
		     * mode, owner, ACL and security labels: Set Security */
		    { "utime", 6 }, { "chmod", 7 }, { "chown", 7 },
		    { "setxattr", 6 }, { "removexattr", 6 } };
	const char *op = str(ev, "op");
	int activity = 99;
	for (size_t i = 0; op && i < sizeof ops / sizeof ops[0]; i++)
		if (strcmp(op, ops[i].op) == 0)
			activity = ops[i].activity;
	const char *attr = str(ev, "attr");
	if (activity == 6 && attr &&
	    (strncmp(attr, "system.posix_acl_", 17) == 0 || strncmp(attr, "security.", 9) == 0))
		activity = 7;
	json_t *o = base(ev, c, 1, 1001, activity, SEV_INFO);
	if (activity == 99)
		set_str(o, "activity_name", op);
	json_object_set_new(o, "severity_id", json_integer(decide(o, ev)));
	const char *path = str(ev, "path");
	json_object_set_new(o, "file", file_obj(path ? path : "", NULL));
	const char *path2 = str(ev, "path2");
	if (path2)
		json_object_set_new(o, "file_result", file_obj(path2, NULL)); /* a rename's, a link's target */
	json_object_set_new(o, "actor", actor(ev));
	json_object_set_new(o, "device", device(c));
	set_str(o, "status_detail", str(ev, "reason"));
	return o;
}

static int severity_of(const char *s)
{
	static const char *const names[] = { "low", "medium", "high", "critical" };
	for (int i = 0; s && i < 4; i++)
		if (strcmp(s, names[i]) == 0)
			return SEV_LOW + i;
	return SEV_INFO;
}

static json_t *detection_finding(json_t *ev, const struct ocsf_ctx *c)
{
	bool risk = strcmp(str(ev, "event"), "risk") == 0;
	const char *level = str(ev, "level");
	int sev = risk ? (level && (strcmp(level, "kill") == 0 || strcmp(level, "freeze") == 0) ? SEV_HIGH
								      : SEV_MEDIUM)
		       : severity_of(str(ev, "severity"));
	json_t *o = base(ev, c, 2, 2004, 1, sev);
	const char *rule = str(ev, "rule");
	json_t *fi = json_object();
	json_object_set(fi, "uid", json_object_get(json_object_get(o, "metadata"), "uid"));
	if (risk)
		json_object_set_new(fi, "title", json_sprintf("risk score crossed the %s threshold",
							      level ? level : "?"));
	else
		set_str(fi, "title", rule && rule[0] ? rule : "alert");
	if (rule && rule[0])
		json_object_set_new(fi, "types", json_pack("[s]", rule));
	const char *desc = str(ev, "detail") ? str(ev, "detail") : str(ev, "action");
	set_str(fi, "desc", desc);
	json_object_set_new(o, "finding_info", fi);
	json_object_set_new(o, "device", device(c));
	return o;
}

json_t *ocsf_event(json_t *ev, const struct ocsf_ctx *c)
{
	const char *kind = str(ev, "event");
	if (!kind)
		return NULL;
	if (strcmp(kind, "exec") == 0)
		return process_activity(ev, c);
	if (strcmp(kind, "net") == 0)
		return network_activity(ev, c);
	if (strcmp(kind, "file") == 0)
		return file_activity(ev, c);
	if (strcmp(kind, "alert") == 0 || strcmp(kind, "risk") == 0)
		return detection_finding(ev, c);
	return NULL;
}
