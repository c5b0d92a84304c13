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

/* The header "audit(SEC.MSEC:SERIAL): " into r, *p past it; false when
 * there is none. */
static bool parse_header(const char **p, const char *end, struct llrec *r)
{
	unsigned long long sec, msec, serial;
	if ((size_t)(end - *p) < 6 || memcmp(*p, "audit(", 6) != 0)
		return false;
	*p += 6;
	if (!read_dec(p, end, &sec) || *p == end || *(*p)++ != '.' || !read_dec(p, end, &msec) ||
	    *p == end || *(*p)++ != ':' || !read_dec(p, end, &serial) || end - *p < 2 ||
	    memcmp(*p, "):", 2) != 0)
		return false;
	if (msec > 999 || serial > ~0UL)
		return false;
	*p += 2;
	r->sec = sec;
	r->msec = (unsigned)msec;
	r->serial = (unsigned long)serial;
	return true;
}

/* A key at *p (up to '='): true and *p past the '='; false when the word
 * there is no key=value (*p past the word). */
static bool read_key(const char **p, const char *end, const char **k, size_t *klen)
{
	*k = *p;
	bool kok = true; /* the kernel's keys: letters, digits, '_' and '-' */
	while (*p < end && **p != '=' && **p != ' ') {
		kok = kok && (isalnum((unsigned char)**p) || **p == '_' || **p == '-');
		(*p)++;
	}
	if (*p == end || **p == ' ' || *p == *k || !kok) {
		while (*p < end && **p != ' ')
			(*p)++;
		return false;
	}
	*klen = (size_t)(*p - *k);
	(*p)++; /* '=' */
	return true;
}

/* The value at *p, quoted or up to the next blank; false when a quote is
 * not closed (the rest is not to be read as fields). */
static bool read_value(const char **p, const char *end, const char **v, size_t *vlen,
		       bool *quoted)
{
	*v = *p;
	*quoted = false;
	if (*p < end && (**p == '"' || **p == '\'')) {
		char q = *(*p)++;
		*v = *p;
		while (*p < end && **p != q)
			(*p)++;
		if (*p == end)
			return false;
		*vlen = (size_t)(*p - *v);
		(*p)++;
		*quoted = true;
		return true;
	}
	while (*p < end && **p != ' ')
		(*p)++;
	*vlen = (size_t)(*p - *v);
	return true;
}

/* vlen hex digits at v decoded into out; false when they are not. */
static bool decode_hex(const char *v, size_t vlen, char *out)
{
	if (vlen % 2)
		return false;
	for (size_t i = 0; i < vlen; i += 2) {
		int hi = hex_digit((unsigned char)v[i]), lo = hex_digit((unsigned char)v[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i / 2] = (char)(hi << 4 | lo);
	}
	return true;
}

/* The field key=value stored at *o (decoded) and added to r; a value that
 * cannot be decoded leaves it out. false when buf is full. */
static bool add_field(struct llrec *r, char **o, const char *k, size_t klen, const char *v,
		      size_t vlen, bool quoted)
{
	if ((size_t)(r->buf + sizeof r->buf - *o) < klen + vlen + 2)
		return false; /* cannot happen with buf twice the text's bound */
	char *kout = *o;
	memcpy(kout, k, klen);
	kout[klen] = '\0';
	char *vout = kout + klen + 1;
	size_t olen = vlen;
	if (!quoted && untrusted_key(kout) && !(vlen >= 2 && v[0] == '(' && v[vlen - 1] == ')')) {
		if (!decode_hex(v, vlen, vout))
			return true; /* a bad hex string: the field is left out */
		olen = vlen / 2;
	} else {
		memcpy(vout, v, vlen);
	}
	vout[olen] = '\0';
	*o = vout + olen + 1;
	r->f[r->n++] = (struct llrec_field){ .key = kout, .value = vout, .len = olen };
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
	if (!parse_header(&p, end, r))
		return -1;
	char *o = r->buf;
	while (p < end) {
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		const char *k, *v;
		size_t klen, vlen;
		bool quoted;
		if (!read_key(&p, end, &k, &klen))
			continue; /* a word that is no key=value */
		if (!read_value(&p, end, &v, &vlen, &quoted))
			break;
		if (r->n == LLREC_MAX_FIELDS)
			continue;
		if (!add_field(r, &o, k, klen, v, vlen, quoted))
			break;
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
 * each NUL of it an "@" too (malloc'd); NULL when it has none. */
static char *unix_path_of(const char *v, size_t len)
{
	if (!(len && v[0] == '\0'))
		return NULL;
	char *s = xmalloc(len + 1);
	for (size_t i = 0; i < len; i++)
		s[i] = v[i] ? v[i] : '@';
	s[len] = '\0';
	return s;
}

/* r's value of key when it holds no NUL, else NULL. */
static const char *text_of(const struct llrec *r, const char *key)
{
	size_t len;
	const char *v = llrec_get(r, key, &len);
	return v && strlen(v) == len ? v : NULL;
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

/* A file's denial: one syscall, several objects (an open that would
 * create: the directory, then the file; a rename: both directories): the
 * path is the last one's, each is listed in "objects". */
static void file_denial(const struct llev *ev, const char *sysname, struct ev_landlock_denial *d)
{
	const struct llrec *last = ev->access[ev->naccess - 1];
	d->op = file_op(sysname);
	d->path = text_of(last, "path");
	if (ev->naccess > 1)
		for (size_t i = 0; i < ev->naccess && i < EV_LANDLOCK_OBJECTS; i++) {
			d->object_path[i] = text_of(ev->access[i], "path");
			d->object_access[i] = text_of(ev->access[i], "blockers");
			d->nobjects++;
		}
	d->dev = text_of(last, "dev");
	d->has_ino = llrec_num(last, "ino", 10, &d->ino);
}

/* A connection's: its address and port, or a unix socket's path (*abstract:
 * a copy the caller frees). */
static void net_denial(const struct llrec *a, struct ev_landlock_denial *d, char **abstract)
{
	const char *b = llrec_get(a, "blockers", NULL);
	d->method = strncmp(b, "scope.", 6) == 0 ? "unix" : strstr(b, "bind") ? "bind" : "connect";
	size_t len;
	const char *v = llrec_get(a, "path", &len);
	if (v)
		d->unix_path = (*abstract = unix_path_of(v, len)) ? *abstract : v;
	static const char *const addrs[3][2] = { { "daddr", "dest" }, { "saddr", "src" },
						 { "laddr", "lport" } };
	const char *addr = NULL, *port = NULL;
	for (size_t i = 0; i < 3 && !addr; i++) {
		addr = llrec_get(a, addrs[i][0], NULL);
		port = addrs[i][1];
	}
	unsigned long long nr;
	if (addr && utf8_valid(addr, strlen(addr)))
		d->address = addr;
	if (addr && llrec_num(a, port, 10, &nr) && nr < 65536)
		d->port = (int)nr;
}

/* A signal's: the target, and the signal by its name when it has one. */
static void signal_denial(const struct llev *ev, const char *sysname, long target_inside,
			  struct ev_landlock_denial *d, char name[16])
{
	const struct llrec *a = ev->access[0];
	d->to_pid = target_inside >= 0 ? target_inside : -1;
	d->to_host_pid = pid_field(a, "opid");
	d->to_comm = text_of(a, "ocomm");
	d->signal_nr = llev_signal_number(ev, sysname);
	const char *abbrev = d->signal_nr > 0 ? sigabbrev_np(d->signal_nr) : NULL;
	if (abbrev) {
		snprintf(name, 16, "SIG%s", abbrev);
		d->signal_name = name;
	}
}

struct event llev_event(const struct llev *ev, long pid_inside, const char *sysname,
			long target_inside)
{
	enum llev_kind k = llev_kind(ev);
	const char *kind = llev_kind_name(k);
	if (!kind)
		return (struct event){ .kind = "file", .fields = NULL };
	struct ev_landlock_denial d = { .kind = kind, .pid = pid_inside, .host_pid = llev_pid(ev),
					.syscall = sysname, .port = -1 };
	d.has_syscall_nr = !sysname && llrec_num(ev->syscall, "syscall", 10, &d.syscall_nr);
	_cleanup_free_ char *abstract = NULL;
	char signame[16];
	if (k == LLEV_FILE)
		file_denial(ev, sysname, &d);
	else if (k == LLEV_NET)
		net_denial(ev->access[0], &d, &abstract);
	else
		signal_denial(ev, sysname, target_inside, &d, signame);
	d.comm = ev->syscall ? text_of(ev->syscall, "comm") : NULL;
	d.access = access_of(ev);
	d.has_domain = llev_domain(ev, &d.domain);
	return ev_landlock_denial(&d);
}
