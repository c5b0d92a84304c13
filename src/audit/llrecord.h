/* llrecord.h - the kernel's audit records of Landlock denials, as text:
 * parse one record ("audit(SEC.MSEC:SERIAL): key=value ..."), gather the
 * records of one audit event (one serial: LANDLOCK_ACCESS, LANDLOCK_DOMAIN,
 * SYSCALL, EOE) and turn an event into a warden event (file, net or signal,
 * with "by": "landlock"). No I/O: the reader (src/supervisor/llaudit.c)
 * does the netlink, decides which session an event belongs to, and names
 * its syscall.
 *
 * What the kernel writes (Documentation/admin-guide/LSM/landlock.rst):
 *   LANDLOCK_ACCESS  domain=HEX blockers=fs.write_file,... then the object:
 *                    path= dev= ino= (files), opid= ocomm= (signals),
 *                    daddr= dest= / saddr= src= (net), path= (unix sockets)
 *   LANDLOCK_DOMAIN  domain=HEX status=allocated mode= pid= uid= exe= comm=,
 *                    or domain=HEX status=deallocated denials=N
 *   SYSCALL          arch= syscall= success= exit= a0..a3= ppid= pid= ... comm= exe=
 * An ACCESS record carries no pid: that comes from the SYSCALL record of the
 * same event, and the domain's creator from its DOMAIN record. Strings the
 * kernel does not trust (path, comm, exe, dev...) are quoted when they hold
 * only printable ASCII other than '"', else written as hex with no quotes. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"

/* The record types (linux/audit.h; the Landlock ones are newer than some
 * build hosts' headers). */
#define KAUDIT_SYSCALL 1300
#define KAUDIT_EOE 1320
#define KAUDIT_LANDLOCK_ACCESS 1423
#define KAUDIT_LANDLOCK_DOMAIN 1424

/* The kernel's bound on a record's text (MAX_AUDIT_MESSAGE_LENGTH). */
#define LLREC_TEXT_MAX 8970
#define LLREC_MAX_FIELDS 64

struct llrec_field {
	const char *key;
	const char *value;       /* decoded, NUL-terminated (may hold NULs: see len) */
	size_t len;
};

/* One record, parsed. Keys and values point into buf. */
struct llrec {
	int type;
	unsigned long long sec;
	unsigned msec;
	unsigned long serial;
	size_t n;
	struct llrec_field f[LLREC_MAX_FIELDS];
	char buf[2 * LLREC_TEXT_MAX + 2];
};

/* Parse the text of one record of type `type` (len bytes, not necessarily
 * NUL-terminated; a trailing NUL or newline is fine). 0, or -1 when it is
 * not a record (no "audit(SEC.MSEC:SERIAL): " header, too long). A field
 * that cannot be read (a bad hex string, an unclosed quote) is left out;
 * fields past LLREC_MAX_FIELDS are ignored. */
int llrec_parse(int type, const char *text, size_t len, struct llrec *r);

/* The decoded value of key (the first), or NULL. */
const char *llrec_get(const struct llrec *r, const char *key, size_t *len);
/* The value of key as an integer of that base (10 or 16): false when it is
 * absent or not wholly a number. */
bool llrec_num(const struct llrec *r, const char *key, int base, unsigned long long *out);
bool llrec_snum(const struct llrec *r, const char *key, long long *out);

/* ---- one audit event -------------------------------------------------- */

#define LLEV_MAX_ACCESS 4

/* The records of one serial that matter here (owned). */
struct llev {
	unsigned long serial;
	unsigned long long sec;
	unsigned msec;
	struct llrec *access[LLEV_MAX_ACCESS];
	size_t naccess;
	struct llrec *domain;    /* LANDLOCK_DOMAIN status=allocated, or NULL */
	struct llrec *syscall;   /* SYSCALL, or NULL */
	bool complete;           /* its EOE came */
};

/* Take r (malloc'd) into ev, whose serial it must have; records of other
 * types, and ACCESS records past LLEV_MAX_ACCESS, are freed. */
void llev_add(struct llev *ev, struct llrec *r);
void llev_clear(struct llev *ev);

/* The domain that refused (its first ACCESS record's), false when none. */
bool llev_domain(const struct llev *ev, uint64_t *domain);
/* The process that made the syscall (SYSCALL pid=), or -1. */
long llev_pid(const struct llev *ev);
/* The domain's creator (DOMAIN pid=), or -1. */
long llev_creator(const struct llev *ev);

/* What the denial was about, from the first ACCESS record's blockers. */
enum llev_kind { LLEV_NONE, LLEV_FILE, LLEV_NET, LLEV_SIGNAL };
enum llev_kind llev_kind(const struct llev *ev);
const char *llev_kind_name(enum llev_kind k); /* "file", "net", "signal" */

/* The warden event for ev: kind file, net or signal; "decision": "deny",
 * "by": "landlock", "access" (the blockers), "domain", pid (inside the
 * sandbox, -1 unknown), host_pid, syscall (its name, or the number when
 * sysname is NULL), and the object: path/path2 (dev, ino) for files;
 * address and port, or path (a unix socket, "@..." abstract), for net;
 * to_pid (the target, inside when in_target >= 0), to_comm and the signal
 * for signals. */
struct event llev_event(const struct llev *ev, long pid_inside, const char *sysname,
			long target_inside);

/* The signal's number of a signal-sending syscall by its name (kill, tkill,
 * tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_send_signal), or -1. */
int llev_signal_number(const struct llev *ev, const char *sysname);
