/* sshagent.h - the SSH agent protocol as warden's agent filter speaks it
 * (draft-miller-ssh-agent, OpenSSH's PROTOCOL.agent): pure functions over
 * bytes, no I/O, so the fuzz target (tests/fuzz/fuzz_sshagent.c) and the
 * unit test reach all of it. The supervisor's service (sshagent_srv.h)
 * frames what the sandbox sends, parses each request here, decides, and
 * rebuilds the host agent's list of keys with only the keys the policy
 * names.
 *
 * A message on the wire: uint32 length, then that many bytes, the first
 * the message's type. Strings are uint32 length and bytes. Nothing here
 * trusts a length: every read is checked against what is there. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/bytebuf.h"
#include "../common/util.h"

/* The message numbers warden reads or answers with. */
enum {
	/* protocol 1's, which ssh-add still sends (ssh-add -D: both
	 * remove-alls), refused as the others are */
	SSHAG1_REQUEST_IDENTITIES = 1,
	SSHAG1_REMOVE_ALL = 9,
	SSHAG_FAILURE = 5,
	SSHAG_SUCCESS = 6,
	SSHAG_REQUEST_IDENTITIES = 11,
	SSHAG_IDENTITIES_ANSWER = 12,
	SSHAG_SIGN_REQUEST = 13,
	SSHAG_SIGN_RESPONSE = 14,
	SSHAG_ADD_IDENTITY = 17,
	SSHAG_REMOVE_IDENTITY = 18,
	SSHAG_REMOVE_ALL = 19,
	SSHAG_ADD_SMARTCARD = 20,
	SSHAG_REMOVE_SMARTCARD = 21,
	SSHAG_LOCK = 22,
	SSHAG_UNLOCK = 23,
	SSHAG_ADD_ID_CONSTRAINED = 25,
	SSHAG_ADD_SMARTCARD_CONSTRAINED = 26,
	SSHAG_EXTENSION = 27,
};

/* The largest message either side may send (the reference agent's own
 * bound). */
#define SSHAG_MSG_MAX (256 * 1024)
/* "SHA256:" and 43 characters of unpadded base64, and the NUL. */
#define SSHAG_FP_MAX 52
/* Keys kept from one list. */
#define SSHAG_KEYS_MAX 256

/* A complete frame at the start of buf (len bytes): 1 with *msg and *msglen
 * the message (type first) and *used the bytes it takes; 0 when more must
 * come; -1 when the length is 0 or over SSHAG_MSG_MAX. */
int sshagent_frame(const uint8_t *buf, size_t len, const uint8_t **msg, size_t *msglen,
		   size_t *used);

/* A request from the sandbox, its parts pointing into the message. */
struct sshagent_req {
	uint8_t type;
	const uint8_t *key; size_t keylen;    /* SIGN_REQUEST: the key blob */
	const uint8_t *data; size_t datalen;  /* SIGN_REQUEST: what is to be signed */
	uint32_t flags;                       /* SIGN_REQUEST */
	const uint8_t *ext; size_t extlen;    /* EXTENSION: its name */
	const uint8_t *hostkey; size_t hostkeylen; /* session-bind: the server's key */
	bool forwarding;                      /* session-bind: is_forwarding */
};

/* msg (type first) into r: 0, or -1 when it is malformed (a short or
 * overlong string, bytes left over). Types other than those above parse
 * with only their type. */
int sshagent_parse_req(const uint8_t *msg, size_t len, struct sshagent_req *r);

/* Is r the extension session-bind@openssh.com? */
bool sshagent_is_session_bind(const struct sshagent_req *r);

/* What a signature request's data says of where it goes (each part NULL
 * when absent): a user authentication (RFC 4252: the user and the
 * service), or an SSHSIG signature (`ssh-keygen -Y sign`, git's signed
 * commits: its namespace). Strings are copies with the NUL, cut at 255
 * bytes. */
struct sshagent_dest {
	char user[256], service[256], sig_namespace[256];
	bool userauth, sshsig;
};
void sshagent_sign_dest(const uint8_t *data, size_t len, struct sshagent_dest *d);

/* One key of the host agent's list. */
struct sshagent_key {
	const uint8_t *blob; size_t bloblen;
	const uint8_t *comment; size_t commentlen;
	char fp[SSHAG_FP_MAX];
};

/* The answer to REQUEST_IDENTITIES (type first) into keys (at most max):
 * their count, or -1 when malformed or longer than max. */
int sshagent_parse_ids(const uint8_t *msg, size_t len, struct sshagent_key *keys, size_t max);

/* "SHA256:" and the unpadded base64 of the blob's SHA-256, as ssh-keygen
 * -l prints it. */
void sshagent_fingerprint(const uint8_t *blob, size_t len, char out[SSHAG_FP_MAX]);

/* Does the selection (fingerprints "SHA256:..." or comments; empty: every
 * key) take k? */
bool sshagent_selected(const struct strv *sel, const struct sshagent_key *k);

/* Append a framed message to out: the failure answer; a list of the keys
 * (n of them) as an IDENTITIES_ANSWER. */
void sshagent_put_failure(struct bytebuf *out);
void sshagent_put_ids(struct bytebuf *out, const struct sshagent_key *keys, size_t n);

/* A request's name for the log: "list", "sign", "add", "remove",
 * "remove-all", "lock", "unlock", "extension", or "type N" in buf. */
const char *sshagent_req_name(uint8_t type, char *buf, size_t len);
