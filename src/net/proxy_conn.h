/* proxy_conn.h - the egress proxy's insides, shared by its three files and
 * by no one else: one connection's state (struct conn) and the proxy object
 * (struct proxy), and what each file offers the others.
 *   proxy.c        accept, the events, a connection's handshake, its refusal
 *                  and its end (the `net` event);
 *   proxy_dial.c   where a connection goes: the rules' verdict, a question
 *                  for a human, the name resolved (resolver threads), the
 *                  addresses dial_allowed keeps, the dial, and the hand-off
 *                  to the relay or to an interception thread;
 *   proxy_relay.c  the bytes both ways once dialled;
 *   proxy_owner.c  which program made each connection, looked up on a thread
 *                  of its own while the connection goes on.
 * The supervisor and the session see only proxy.h. */
#pragma once
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "../audit/netbound.h"
#include "../common/clock.h"
#include "addr.h"
#include "askq.h"
#include "forward.h"
#include "http.h"
#include "intercept.h"
#include "proxy.h"
#include "reqrules.h"
#include "rules.h"
#include "socks5.h"

#define MAX_CANDIDATES 8
#define PIPE_CHUNK 65536       /* a pipe's default capacity */

enum state { S_HANDSHAKE, S_RESOLVING, S_DIALING, S_RELAY, S_CLOSING, S_INTERCEPT, S_ASKING,
	     S_OWNER /* the rules wait for its program (conn_decide_again) */ };
enum tag { T_CLIENT, T_UPSTREAM, T_FORWARD };

struct conn;
struct item {
	enum tag tag;
	struct conn *c;
};

/* The listener of one host loopback port; its item is tagged T_FORWARD. */
struct fwd_listener {
	struct item it;
	int fd;
	struct net_forward fw;
};

struct conn {
	struct proxy *px;
	const struct net_forward *fw; /* a host loopback port's connection, else NULL */
	struct conn *prev, *next;
	struct item ic, iu;
	int cfd, ufd;
	unsigned ev_c, ev_u;       /* epoll interest currently registered */
	bool reg_c, reg_u;         /* fd added to the epoll set */
	enum state state;
	bool socks, plain;         /* SOCKS5; absolute-form HTTP (not a tunnel) */
	bool resolving_dead;       /* closed while a resolver thread holds it */
	bool dead;                 /* closed; freed at the end of the dispatch */
	struct http_parser *hp;
	struct socks5_parser *sp;
	struct http_body_reader body;
	bool body_done;
	/* bytes waiting to go out before relaying: to the client (replies),
	 * to the upstream (forwarded head, early data) */
	char *to_c, *to_u;
	size_t to_c_len, to_c_off, to_u_len, to_u_off;
	int pipe_cu[2], pipe_uc[2];
	size_t in_cu, in_uc;
	size_t pipe_cap;           /* capacity both pipes are known to have */
	bool grow_tried;
	bool c_eof, u_eof, cu_shut, uc_shut, status_seen;
	/* for the event */
	char method[24], host[256],
		rule[NET_RULE_TEXT_MAX + NET_PROGRAM_MAX + NET_METHODS_MAX + REQGLOB_MAX + 16],
		reason[700], address[64];
	char path[512];            /* plain: the request's path, where request rules read it */
	uint16_t port;
	int status;
	bool allowed;
	unsigned long long bytes_out, bytes_in;
	struct timespec start, last;
	const struct net_rule *allow_rule;
	struct addr_ip cand[MAX_CANDIDATES];
	int ncand, icand;
	/* secrets (struct proxy_guard) */
	struct net_host dest;      /* where it goes, as the rules saw it */
	size_t head_len;           /* plain: the forwarded head's bytes at the start of to_u */
	void *guard;               /* the guard's per-connection state, or NULL */
	bool intercepted;          /* handed to an interception thread (S_INTERCEPT) */
	const void *question;      /* S_ASKING: the open question (proxy_asker) */
	unsigned requests;
	char leak_why[256];        /* the guard refused: why */
	char tool[24];             /* the tool call it belongs to (proxy_cfg.tag), "" none */
	bool hello_check;          /* a tunnel's first bytes held in to_u for their SNI (sni.h) */
	struct net_program prog;   /* the program behind the client's socket (proxy_cfg.owner) */
	bool prog_asked;           /* prog filled (once per connection) */
	bool prog_pending;         /* its lookup is on the owner thread: not freed before the answer */
	bool log_wait;             /* ended, its event written once its program is known */
	double duration_ms;        /* from the accept to its end */
};

/* The requests of an intercepted connection that request rules refused,
 * or that an ask rule put to a human (proxy_req.c): written by its thread,
 * read once it ended. */
#define REQ_REFUSALS_KEPT 16
struct req_refusal {
	char method[24], path[256], rule[NET_RULE_TEXT_MAX + NET_METHODS_MAX + REQGLOB_MAX],
		reason[512];
	int status;
	bool allowed;              /* asked, and a human allowed it */
};
/* ... and the first ones a request rule allowed (a `net` event each). */
#define REQ_ALLOWED_KEPT 16
struct req_pass {
	char method[24], path[256];
	const struct net_rule *rule; /* the rules' own, alive for the session */
};
struct req_check {
	const struct net_rules *rules;
	struct net_host host;
	uint16_t port;
	bool bound;                /* a secret is put in there (TRACE, TRACK refused) */
	bool tls;                  /* HTTPS warden terminates (else a host loopback port) */
	struct askq *asks;         /* where an ask rule's question goes (the proxy's) */
	int stop_fd;               /* readable: the session ends, a question with it */
	int client_fd, upstream_fd; /* the client's and the server's sockets (the thread's) */
	unsigned n, dropped;       /* refusals kept, and not kept */
	struct req_refusal v[REQ_REFUSALS_KEPT];
	unsigned npass;            /* allowed by a request rule, kept */
	struct req_pass ok[REQ_ALLOWED_KEPT];
};

/* An interception thread's job and the connection it belongs to. */
struct ijob {
	struct intercept_job job;  /* first: the thread reports its address */
	struct conn *c;
	struct req_check rc;
};

struct job {
	struct job *next;
	struct conn *c;
	char host[256];
	int err;
	struct addr_ip ips[MAX_CANDIDATES];
	int n;
};

struct proxy {
	int ep, lhttp, lsocks, tfd, efd;
	struct item ilhttp, ilsocks, itimer, ievent;
	struct fwd_listener fwd[FORWARD_MAX];
	size_t nfwd;
	const struct net_rules *rules;
	struct addr_local local;
	bool local_loaded;         /* this host's addresses, read at the first dial */
	struct audit *log;
	struct conn *conns, *graveyard;
	size_t nconns;
	size_t cap;                /* connections at most: well under the fd limit */
	bool paused;               /* the listeners not watched: at the cap, or out of fds */
	bool cap_said;
	pthread_t workers[2];
	int nworkers;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *todo, *done;
	bool stop;
	struct proxy_guard guard;
	bool guarded;
	bool prog_first;           /* a rule or a secret names a program: the rules wait for
				    * each connection's program; else it goes on at once */
	struct proxy_asker asker;  /* who answers `net ask` (ask NULL: nobody: refused) */
	struct proxy_mcp *mcp;     /* proxy_cfg.mcp */
	struct askq *asks;         /* interception threads' questions (request rules) */
	struct item iasks;
	bool default_ask;          /* a destination no rule names is a question */
	bool sni_required;         /* a tunnel's ClientHello must name its host */
	int done_pipe[2];          /* interception threads report here */
	int stop_pipe[2];          /* closing [1] stops every interception thread */
	struct item idone;
	size_t njobs;              /* interceptions still running */
	const char *(*tag)(void *ctx, int fd); /* the tool call of a connection */
	void *tag_ctx;
	struct proxy_owner owner;  /* who made a connection (begin NULL: nobody) */
	struct owner_jobs *owners; /* proxy_owner.c's thread and queues, once started */
	struct item iowner;
	struct netbound refused;   /* refused connections on the record one by one
				      (netbound.h); the rest counted */
};

/* A new connection sends what it has at once: Nagle's wait for more, on
 * top of the peer's delayed ACK, stalls the last flight of a TLS handshake
 * by tens of milliseconds. A tunnel that proves busy gets Nagle back
 * (proxy_relay.c): full segments for a bulk transfer. */
static inline void nodelay(int fd, int on)
{
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

/* ---- proxy_req.c: request rules (reqrules.h) at the proxy ------------------- */

/* A human's answer to a question about a connection (proxy_asker's done). */
typedef void (*proxy_answered_fn)(void *conn, bool allow, const char *why);
/* A plain request's method and path under the request rules: 0 goes on,
 * 1 a human is asked (done gets the answer, and goes on or refuses), -1
 * refused (answered). */
int proxy_req_plain(struct conn *c, proxy_answered_fn done);
/* A connection whose requests warden will not see (SOCKS5; a tunnel or a
 * host loopback port the guard did not have intercepted) to a host request
 * rules name: refused (true). */
bool proxy_req_unseen(struct conn *c, bool intercepted);
/* intercept_req_fn of an intercepted connection (ctx: its struct req_check). */
int proxy_req_intercepted(void *ctx, const char *method, const char *target, size_t tlen,
			  char *why, size_t whylen);
/* An intercepted connection's error (intercept_job.error) into its
 * reason; a client that refused the session CA's certificate told why
 * warden terminated the TLS (the rule, or a secret). */
void proxy_req_terminated_error(struct conn *c, const char *error);
/* The requests an intercepted connection kept (refused, allowed by a
 * request rule, or put to a human), each a `net` event. */
void proxy_req_events(struct conn *c, const struct req_check *rc);

/* ---- proxy_conn.c: a connection's state and its end ----------------------- */

/* Watch the proxy's listeners again (on), or leave new connections in the
 * kernel's backlog (at the cap, or out of descriptors). */
void proxy_listeners_watch(struct proxy *px, bool on);
/* Take c out of the proxy's list of connections (the listeners watched
 * again once well under the cap). */
void conn_unlink(struct proxy *px, struct conn *c);

/* Watch for what each side waits for, from the connection's state. */
void conn_interest(struct conn *c);
/* Queue bytes for the client, or for the upstream, sent before relaying. */
void conn_queue_client(struct conn *c, const void *data, size_t n);
void conn_queue_upstream(struct conn *c, const void *data, size_t n);
/* Close the upstream socket, if any (taken out of the epoll set). */
void conn_close_upstream(struct conn *c);
/* Refuse: answer the client in its protocol (http_status for HTTP,
 * socks_code for SOCKS5, nothing for a host loopback port), once its
 * program is known (the lookup started if it was not), then close once
 * that is sent. */
void conn_refuse(struct conn *c, int http_status, uint8_t socks_code, const char *reason);
/* Log the connection's event, close it and free it at the end of the
 * dispatch (later still while a resolver thread holds it; its event
 * waits for its program while the owner thread looks it up). */
void conn_free(struct conn *c);
/* The event of a connection that ended while its program was looked up
 * (log_wait), written now; freed at the end of the dispatch. */
void conn_log_late(struct conn *c);

/* ---- proxy_dial.c: where a connection goes -------------------------------- */

/* The rules' verdict on h (and c->port): refused, allowed (then resolved
 * and dialled), or a question for a human. */
void conn_decide(struct conn *c, const struct net_host *h);
/* A host loopback port's connection: the rules decide again, then dial. */
void conn_forward_start(struct conn *c);
/* c waited for its program (S_OWNER), now known: the rules decide. */
void conn_decide_again(struct conn *c);
/* The upstream socket of a connection being dialled is writable: connected
 * (then relayed or intercepted), or the next candidate address is tried. */
void conn_dial_event(struct conn *c);
/* The resolver threads' answers (the eventfd is readable): each waiting
 * connection dialled or refused. */
void resolver_collect(struct proxy *px);
/* Stop the resolver threads, if started; release the connections whose
 * names they held or had yet to resolve. */
void resolvers_stop(struct proxy *px);
/* Interception threads that ended (the done pipe is readable): their
 * numbers into each connection's event, which is then written. */
void intercepts_collect(struct proxy *px);

/* ---- proxy_owner.c: which program made a connection ----------------------- */

/* Start the lookup of c's program, once (its request is in, or it ends):
 * its answer in c->prog at once, or later from the owner thread
 * (c->prog_pending until then). */
void conn_owner_begin(struct conn *c);
/* The owner thread's answers (its eventfd is readable), each into its
 * connection, then known(c) (a waiting one decided, an ended one's event
 * written). */
void owners_collect(struct proxy *px, void (*known)(struct conn *c));
/* Stop the owner thread once it has answered every lookup asked of it,
 * and deliver the answers. */
void owners_stop(struct proxy *px, void (*known)(struct conn *c));

/* ---- proxy_relay.c: the bytes both ways ----------------------------------- */

/* Send what is queued for the client; true when all of it is out (false
 * with errno, EAGAIN when the socket is full). */
bool conn_flush_client(struct conn *c);
/* Move what can move without blocking; the connection ends (freed) when
 * both ways are done. */
void conn_relay(struct conn *c);
/* The relay begins (c is dialled, S_RELAY): what the client sent with its
 * request, in to_u already, taken as if read now, then a first round. */
void conn_relay_begin(struct conn *c);

