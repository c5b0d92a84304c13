/* ocsf.h - warden's audit events as OCSF 1.3.0 events (the Open
 * Cybersecurity Schema Framework, schema.ocsf.io/1.3.0), for `warden log
 * export --format ocsf`:
 *   exec                 Process Activity (1007), Launch (1); a file mapped
 *                        executable (mmap, mprotect): Other (99)
 *   net                  Network Activity (4001): a refusal Refuse (5), a
 *                        connection through the proxy that ended Traffic (6)
 *   file                 File System Activity (1001): open Open (14), unlink
 *                        Delete (4), rename Rename (5), link, symlink, mkdir
 *                        Create (1), truncate Update (3), read Read (2), else
 *                        Other (99)
 *   alert, risk          Detection Finding (2004), Create (1)
 * The rest (session.start, session.end, syscall, signal, kill, action,
 * limit, approval, tool, the .suppressed counts, log.failed) has no class
 * here: ocsf_event returns NULL for them. Every event carries the base
 * attributes (category_uid, class_uid, activity_id, type_uid =
 * class_uid * 100 + activity_id, severity_id, time in ms, metadata with
 * the product and OCSF version, the log's session and seq as
 * metadata.uid "SESSION:SEQ" and metadata.correlation_uid SESSION), the
 * decision as action_id/disposition_id where there is one, the profiles
 * those and Network Activity's actor and device come from named in
 * metadata.profiles (security_control, host), and the warden event itself
 * under "unmapped" (nothing lost). A host name that is not an OCSF
 * hostname_t goes to the endpoint's or device's name instead. */
#pragma once
#include <jansson.h>

#define OCSF_VERSION "1.3.0"

struct ocsf_ctx {
	const char *product_version;   /* warden's version */
	const char *hostname;          /* the host's name (device.hostname) */
};

/* The OCSF event of ev (a line of the log, parsed: audit_parse_line), new;
 * NULL when its kind has no OCSF class here. */
json_t *ocsf_event(json_t *ev, const struct ocsf_ctx *c);
