/* llrecord.c - the kernel's audit records of Landlock denials (see
 * llrecord.h): one record's text parsed into decoded fields, the records
 * of one serial gathered, and a gathered event turned into a warden event.
 * Everything here is fed bytes from the kernel, which copied parts of them
 * from the agent (paths, command names): nothing is trusted to be short,
 * terminated or well formed. */
#include "llrecord.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "escape.h"

/* The fields the kernel writes with audit_log_untrustedstring: quoted, or
 * hex when they hold anything but printable ASCII. */
static bool untrusted_key(const char *k)
{
	static const char *const keys[] = { "path", "name", "dev", "comm", "ocomm", "exe",
					    "proctitle", "cwd", "key" };
	for (size_t i = 0; i < ARRAY_LEN(keys); i++)
		if (strcmp(k, keys[i]) == 0)
			return true;
	return false;
}

/* Read decimal digits from *p (at most up to end) into *v; false when there
 * are none or it overflows. */
static bool read_dec(const char **p, const char *end, unsigned long long *v)
{
	const char *s = *p;
	unsigned long long x = 0;
	while (s < end && *s >= '0' && *s <= '9') {
		if (x > (~0ULL - 9) / 10)
			return false;
		x = x * 10 + (unsigned long long)(*s - '0');
		s++;
	}
	if (s == *p)
		return false;
	*p = s;
	*v = x;
	return true;
}

int llrec_parse(int type, const char *text, size_t len, struct llrec *r)
{
	r->type = type;
	r->n = 0;
	if (!text || len > LLREC_TEXT_MAX)
		return -1;
	/* a trailing NUL, newline or blanks are not part of it */
	while (len && (text[len - 1] == '\0' || text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	const char *p = text, *end = text + len;
	unsigned long long sec, msec, serial;
	if ((size_t)(end - p) < 6 || memcmp(p, "audit(", 6) != 0)
		return -1;
	p += 6;
	if (!read_dec(&p, end, &sec) || p == end || *p++ != '.' || !read_dec(&p, end, &msec) ||
	    p == end || *p++ != ':' || !read_dec(&p, end, &serial) || end - p < 2 ||
	    memcmp(p, "):", 2) != 0)
		return -1;
	if (msec > 999 || serial > ~0UL)
		return -1;
	p += 2;
	r->sec = sec;
	r->msec = (unsigned)msec;
	r->serial = (unsigned long)serial;

	char *o = r->buf, *oend = r->buf + sizeof r->buf;
	while (p < end) {
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		/* the key: up to '=' (a word without one is skipped) */
		const char *k = p;
		bool kok = true; /* the kernel's keys: letters, digits, '_' and '-' */
		while (p < end && *p != '=' && *p != ' ') {
			kok = kok && (isalnum((unsigned char)*p) || *p == '_' || *p == '-');
			p++;
		}
		if (p == end || *p == ' ' || p == k || !kok) {
			while (p < end && *p != ' ')
				p++; /* a word that is no key=value */
			continue;
		}
		size_t klen = (size_t)(p - k);
		p++; /* '=' */
		const char *v = p;
		size_t vlen;
		bool quoted = false;
		bool ok = true;
		if (p < end && (*p == '"' || *p == '\'')) {
			char q = *p++;
			v = p;
			while (p < end && *p != q)
				p++;
			if (p == end) {
				ok = false; /* unclosed: the rest is not to be read as fields */
				vlen = 0;
			} else {
				vlen = (size_t)(p - v);
				p++;
			}
			quoted = true;
		} else {
			while (p < end && *p != ' ')
				p++;
			vlen = (size_t)(p - v);
		}
		if (!ok)
			break;
		if (r->n == LLREC_MAX_FIELDS)
			continue;
		if ((size_t)(oend - o) < klen + vlen + 2)
			break; /* cannot happen with buf twice the text's bound */
		char *kout = o;
		memcpy(o, k, klen);
		o[klen] = '\0';
		o += klen + 1;
		char *vout = o;
		size_t olen;
		if (!quoted && untrusted_key(kout) && !(vlen >= 2 && v[0] == '(' && v[vlen - 1] == ')')) {
			if (vlen % 2) {
				o = kout; /* a bad hex string: the field is left out */
				continue;
			}
			bool good = true;
			for (size_t i = 0; i < vlen; i += 2) {
				int hi = hex_digit((unsigned char)v[i]), lo = hex_digit((unsigned char)v[i + 1]);
				if (hi < 0 || lo < 0) {
					good = false;
					break;
				}
				vout[i / 2] = (char)(hi << 4 | lo);
			}
			if (!good) {
				o = kout;
				continue;
			}
			olen = vlen / 2;
		} else {
			memcpy(vout, v, vlen);
			olen = vlen;
		}
		vout[olen] = '\0';
		o = vout + olen + 1;
		r->f[r->n++] = (struct llrec_field){ .key = kout, .value = vout, .len = olen };
	}
	return 0;
}

const char *llrec_get(const struct llrec *r, const char *key, size_t *len)
{
	for (size_t i = 0; r && i < r->n; i++)
		if (strcmp(r->f[i].key, key) == 0) {
			if (len)
				*len = r->f[i].len;
			return r->f[i].value;
		}
	return NULL;
}

bool llrec_num(const struct llrec *r, const char *key, int base, unsigned long long *out)
{
	size_t len;
	const char *v = llrec_get(r, key, &len);
	if (!v || !len || strlen(v) != len || !(isdigit((unsigned char)v[0]) ||
						(base == 16 && isxdigit((unsigned char)v[0]))))
		return false;
	char *e;
	errno = 0;
	unsigned long long x = strtoull(v, &e, base);
	if (errno || *e)
		return false;
	*out = x;
	return true;
}

bool llrec_snum(const struct llrec *r, const char *key, long long *out)
{
	size_t len;
	const char *v = llrec_get(r, key, &len);
	if (!v || !len || strlen(v) != len)
		return false;
	char *e;
	errno = 0;
	long long x = strtoll(v, &e, 10);
	if (errno || *e || e == v)
		return false;
	*out = x;
	return true;
}

/* ---- one audit event -------------------------------------------------- */

void llev_add(struct llev *ev, struct llrec *r)
{
	if (r->type == KAUDIT_LANDLOCK_ACCESS && ev->naccess < LLEV_MAX_ACCESS) {
		ev->access[ev->naccess++] = r;
		return;
	}
	if (r->type == KAUDIT_LANDLOCK_DOMAIN && !ev->domain) {
		const char *st = llrec_get(r, "status", NULL);
		if (st && strcmp(st, "allocated") == 0) {
			ev->domain = r;
			return;
		}
	}
	if (r->type == KAUDIT_SYSCALL && !ev->syscall) {
		ev->syscall = r;
		return;
	}
	if (r->type == KAUDIT_EOE)
		ev->complete = true;
	free(r);
}

void llev_clear(struct llev *ev)
{
	for (size_t i = 0; i < ev->naccess; i++)
		free(ev->access[i]);
	free(ev->domain);
	free(ev->syscall);
	*ev = (struct llev){ 0 };
}

bool llev_domain(const struct llev *ev, uint64_t *domain)
{
	unsigned long long d;
	if (!ev->naccess || !llrec_num(ev->access[0], "domain", 16, &d))
		return false;
	*domain = d;
	return true;
}

static long pid_field(const struct llrec *r, const char *key)
{
	unsigned long long v;
	if (!r || !llrec_num(r, key, 10, &v) || v == 0 || v > 0x7fffffff)
		return -1;
	return (long)v;
}

long llev_pid(const struct llev *ev)
{
	return pid_field(ev->syscall, "pid");
}

long llev_creator(const struct llev *ev)
{
	return pid_field(ev->domain, "pid");
}

enum llev_kind llev_kind(const struct llev *ev)
{
	const char *b = ev->naccess ? llrec_get(ev->access[0], "blockers", NULL) : NULL;
	if (!b)
		return LLEV_NONE;
	if (strncmp(b, "fs.", 3) == 0)
		return LLEV_FILE;
	if (strncmp(b, "net.", 4) == 0 || strncmp(b, "scope.abstract_unix_socket", 26) == 0)
		return LLEV_NET;
	if (strncmp(b, "scope.signal", 12) == 0)
		return LLEV_SIGNAL;
	return LLEV_NONE;
}

const char *llev_kind_name(enum llev_kind k)
{
	switch (k) {
	case LLEV_FILE:
		return "file";
	case LLEV_NET:
		return "net";
	case LLEV_SIGNAL:
		return "signal";
	default:
		return NULL;
	}
}

/* The blockers of every ACCESS record, each once, as an array. */
static json_t *access_of(const struct llev *ev)
{
	json_t *a = json_array();
	for (size_t i = 0; i < ev->naccess; i++) {
		const char *b = llrec_get(ev->access[i], "blockers", NULL);
		while (b && *b) {
			size_t n = strcspn(b, ",");
			if (n && n < 64) {
				char one[64];
				memcpy(one, b, n);
				one[n] = '\0';
				bool seen = false;
				size_t j;
				json_t *x;
				json_array_foreach(a, j, x)
					seen = seen || strcmp(json_string_value(x), one) == 0;
				if (!seen && utf8_valid(one, n))
					json_array_append_new(a, json_string(one));
			}
			b += n;
			if (*b == ',')
				b++;
		}
	}
	return a;
}

/* What a syscall does to a file, as `file` events name it (ev_file). */
static const char *file_op(const char *sysname)
{
	static const struct {
		const char *prefix, *op;
	} ops[] = {
		{ "open", "open" },	  { "creat", "open" },	   { "unlink", "unlink" },
		{ "rmdir", "unlink" },	  { "rename", "rename" },  { "link", "link" },
		{ "symlink", "symlink" }, { "mkdir", "mkdir" },	   { "mknod", "mknod" },
		{ "truncate", "truncate" }, { "ftruncate", "truncate" }, { "execve", "exec" },
		{ "ioctl", "ioctl" },	  { "readdir", "read" },   { "getdents", "read" },
	};
	if (!sysname)
		return "access";
	for (size_t i = 0; i < ARRAY_LEN(ops); i++)
		if (strncmp(sysname, ops[i].prefix, strlen(ops[i].prefix)) == 0)
			return ops[i].op;
	return sysname;
}

/* An abstract unix socket's name as warden writes it: "@" and the name,
 * each NUL of it an "@" too. */
static void set_unix_path(json_t *f, const char *v, size_t len, json_t **esc)
{
	if (len && v[0] == '\0') {
		char *s = xmalloc(len + 1);
		for (size_t i = 0; i < len; i++)
			s[i] = v[i] ? v[i] : '@';
		s[len] = '\0';
		json_set_bytes(f, "path", s, esc);
		free(s);
	} else {
		json_set_bytes(f, "path", v, esc);
	}
}

int llev_signal_number(const struct llev *ev, const char *sysname)
{
	static const struct {
		const char *name, *arg;
	} calls[] = {
		{ "kill", "a1" },	     { "tkill", "a1" },		     { "tgkill", "a2" },
		{ "rt_sigqueueinfo", "a1" }, { "rt_tgsigqueueinfo", "a2" }, { "pidfd_send_signal", "a1" },
	};
	unsigned long long v;
	for (size_t i = 0; sysname && i < ARRAY_LEN(calls); i++)
		if (strcmp(sysname, calls[i].name) == 0)
			return llrec_num(ev->syscall, calls[i].arg, 16, &v) && v > 0 && v < 65 ? (int)v : -1;
	return -1;
}

struct event llev_event(const struct llev *ev, long pid_inside, const char *sysname,
			long target_inside)
{
	enum llev_kind k = llev_kind(ev);
	const char *kind = llev_kind_name(k);
	if (!kind)
		return (struct event){ .kind = "file", .fields = NULL };
	const struct llrec *a = ev->access[0];
	json_t *esc = NULL;
	json_t *f = json_object();
	json_object_set_new(f, "pid", json_integer(pid_inside));
	json_object_set_new(f, "host_pid", json_integer(llev_pid(ev)));
	unsigned long long nr;
	if (sysname)
		json_object_set_new(f, "syscall", json_string(sysname));
	else if (llrec_num(ev->syscall, "syscall", 10, &nr))
		json_object_set_new(f, "syscall", json_sprintf("%llu", nr));
	else
		json_object_set_new(f, "syscall", json_null());
	size_t len;
	const char *v;
	if (k == LLEV_FILE) {
		json_object_set_new(f, "op", json_string(file_op(sysname)));
		/* one syscall, several objects (an open that would create: the
		 * directory, then the file; a rename: both directories): the
		 * path is the last one's, each is listed in "objects" */
		const struct llrec *last = ev->access[ev->naccess - 1];
		const char *p = llrec_get(last, "path", &len);
		json_set_bytes(f, "path", p && strlen(p) == len ? p : NULL, &esc);
		if (ev->naccess > 1) {
			json_t *objs = json_array();
			for (size_t i = 0; i < ev->naccess; i++) {
				json_t *o = json_object();
				json_t *oesc = NULL;
				p = llrec_get(ev->access[i], "path", &len);
				json_set_bytes(o, "path", p && strlen(p) == len ? p : NULL, &oesc);
				const char *b = llrec_get(ev->access[i], "blockers", &len);
				json_set_bytes(o, "access", b && strlen(b) == len ? b : NULL, &oesc);
				if (oesc)
					json_object_set_new(o, "escaped", oesc);
				json_array_append_new(objs, o);
			}
			json_object_set_new(f, "objects", objs);
		}
		a = last;
		if ((v = llrec_get(a, "dev", &len)) && strlen(v) == len)
			json_set_bytes(f, "dev", v, &esc);
		if (llrec_num(a, "ino", 10, &nr))
			json_object_set_new(f, "ino", json_integer((json_int_t)nr));
	} else if (k == LLEV_NET) {
		const char *b = llrec_get(a, "blockers", NULL);
		bool unix_scope = strncmp(b, "scope.", 6) == 0;
		json_object_set_new(f, "method", json_string(unix_scope ? "unix"
			: strstr(b, "bind") ? "bind" : "connect"));
		if ((v = llrec_get(a, "path", &len)))
			set_unix_path(f, v, len, &esc);
		const char *addr = llrec_get(a, "daddr", NULL), *port = "dest";
		if (!addr) {
			addr = llrec_get(a, "saddr", NULL);
			port = "src";
		}
		if (!addr) {
			addr = llrec_get(a, "laddr", NULL);
			port = "lport";
		}
		if (addr && utf8_valid(addr, strlen(addr)))
			json_object_set_new(f, "address", json_string(addr));
		if (addr && llrec_num(a, port, 10, &nr) && nr < 65536)
			json_object_set_new(f, "port", json_integer((json_int_t)nr));
	} else {
		long to = pid_field(a, "opid");
		json_object_set_new(f, "to_pid", json_integer(target_inside >= 0 ? target_inside : -1));
		json_object_set_new(f, "to_host_pid", json_integer(to));
		if ((v = llrec_get(a, "ocomm", &len)) && strlen(v) == len)
			json_set_bytes(f, "to_comm", v, &esc);
		int sig = llev_signal_number(ev, sysname);
		const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;
		if (abbrev)
			json_object_set_new(f, "signal", json_sprintf("SIG%s", abbrev));
		else if (sig > 0)
			json_object_set_new(f, "signal", json_integer(sig));
	}
	if ((v = ev->syscall ? llrec_get(ev->syscall, "comm", &len) : NULL) && strlen(v) == len)
		json_set_bytes(f, "comm", v, &esc);
	json_object_set_new(f, "access", access_of(ev));
	json_object_set_new(f, "decision", json_string("deny"));
	json_object_set_new(f, "by", json_string("landlock"));
	uint64_t dom;
	if (llev_domain(ev, &dom))
		json_object_set_new(f, "domain", json_sprintf("%llx", (unsigned long long)dom));
	if (esc)
		json_object_set(f, "escaped", esc);
	json_decref(esc);
	return (struct event){ .kind = kind, .fields = f };
}
