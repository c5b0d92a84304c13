/* intercept_int.h - the inside of one intercepted connection, shared by
 * intercept.c (the loop, the relay, the requests passed on), which calls
 * intercept_local.c (the bridge's own state, the requests warden answers
 * itself: a held one the owner decided, one on_req refused). Not for other
 * files. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "../common/bytebuf.h"
#include "http.h"
#include "http_resp.h"
#include "intercept.h"
#include "intercept_io.h"

#define BUF 16384                /* one TLS record */
#define MAX_INFLIGHT 64

/* What is done with the client's bytes. */
enum cstate {
	C_HEAD,         /* the next request head */
	C_BODY,         /* its body */
	C_WAIT_UPGRADE, /* a request that asked to upgrade went; its answer decides */
	C_RAW,          /* upgraded: raw bytes */
	C_STOPPED,      /* refused: read no more */
	C_DROP,         /* the body of a request on_req refused: read, dropped */
	C_LOCAL,        /* warden's own answer to the request read (a held one the owner
			 * answered, one on_req refused) goes once the responses before it did */
};

#define Q_HEAD 1u    /* the request was HEAD */
#define Q_UPGRADE 2u /* it asked to upgrade */

struct outbuf {
	struct bytebuf q;
	uint64_t total;         /* bytes ever put */
};

struct bridge {
	struct intercept_job *job;
	char *early;            /* the job's early bytes (copied), until TLS takes them */
	size_t early_len;
	SSL_CTX *sctx, *cctx;   /* references of the bridge's own */
	struct side c, u;
	/* client -> upstream */
	char cin[BUF];
	size_t cin_len, cin_off;
	struct outbuf to_u;
	enum cstate cs;
	struct http_parser *hp, *check;
	struct http_body_reader body;
	bool cur_upgrade;       /* the request whose body is being read asked to upgrade */
	uint64_t cur_start;     /* to_u.total where that request's head begins */
	/* requests sent whose final responses have not ended, oldest first */
	unsigned char q[MAX_INFLIGHT];
	size_t qhead, qn;
	/* upstream -> client */
	char uin[BUF];
	size_t uin_len, uin_off;
	size_t held;            /* on_resp's held bytes, at uin[uin_len..uin_len + held) */
	struct timespec held_since; /* ... since when (an unframed stream lets them go later) */
	bool uin_ours;          /* uin holds our own answer, not the server's bytes */
	struct http_resp rw;
	bool watching;          /* rw frames the stream (not lost, not switched) */
	/* our own answer in place of what follows */
	bool answer_pending, answer_sent, answer_written;
	bool cutting;           /* the upstream has part of a refused request: send no more, cut it */
	int answer_status;
	char answer_reason[256];
	struct timespec last;
	bool h2;                /* the connection was HTTP/2, over and done */
	/* a held request (job->hold): its head and body so far */
	bool holding;
	struct bytebuf hhead, hbody;
	/* warden's own answer to a request (the owner's to a held one, or
	 * on_req's refusal), owed once the responses before it are through
	 * (C_LOCAL); where it finds no place between two responses, the
	 * connection ends with local_status and local_reason */
	char *reply;
	size_t reply_len;
	int local_status;
	bool local_by_callback;
	char local_reason[512];
};


/* intercept_local.c: the bridge's own state */
/* The connection's first error (later ones are dropped). */
void ix_set_error(struct bridge *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t ix_pending(const struct outbuf *o);
/* Refuse what the client sent: our answer status/reason once the
 * responses before it are through (see intercept_local.c). */
void ix_refuse(struct bridge *b, int status, const char *reason, bool by_callback, bool cut);
void ix_out_put(struct outbuf *o, const void *d, size_t n);
void ix_q_push(struct bridge *b, unsigned f);
void ix_resume_requests(struct bridge *b);
void ix_request_done(struct bridge *b);

/* intercept_local.c: warden's own answers */
/* A request's head goes upstream: its response is owed. */
void ix_send_head(struct bridge *b, const char *h, size_t n);
/* A held request is whole: the owner decides (job->hold). */
void ix_release_held(struct bridge *b);
/* Body bytes of a held request, within the bound: false when refused. */
bool ix_hold_data(struct bridge *b, const char *d, size_t n);
/* on_req refuses the request just read: true, its answer owed. */
bool ix_request_refused(struct bridge *b);
/* warden's own answer placed between two responses: true when it did. */
bool ix_local_answer(struct bridge *b);
