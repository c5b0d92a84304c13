/* tlsmod.h - TLS as a module of warden's own, so that only a process that
 * terminates or originates TLS pays for it.
 *
 * libssl, libcrypto's providers and nghttp2 are linked statically, and a
 * position-independent binary must relocate every pointer of their data at
 * each start: 340 KiB of it, about 100 page faults and 2 ms of a plain
 * `warden run -- true` on a host where a page fault is dear (bench/README.md,
 * "Evening, 2026-12-01"), for sessions that make no TLS at all. So the TLS
 * code (tls.c, tls_bio.c, post.c, intercept*.c and the parsers they use) is
 * built as a shared module, warden-tls.so, carried inside warden's binary as
 * bytes (tlsmod_blob.c, generated), and loaded on the first call that needs
 * it: a session's CA (secrets, inspected hosts, MCP rules), an https
 * client context (the webhook, an OTLP stream), a POST, an intercepted
 * connection.
 *
 * Loading: the bytes are written once into warden's cache directory (out of
 * every sandbox's reach; the copy named by their digest, 0400, checked at
 * each load: this user's, written by no one, whole) and that file is opened
 * by dlopen through /proc/self/fd, so the file checked is the file loaded.
 * Where there is no cache directory, it is on a noexec mount, or the copy
 * does not load, the bytes go into a memfd sealed against every change
 * instead (5 MB copied each time). Nothing to install beside the binary,
 * never a module of another build, never a file a sandbox could write. A
 * failure (a kernel that refuses executable memfds: vm.memfd_noexec = 2)
 * fails the call that needed TLS, with the sysctl named; nothing else of
 * warden depends on it.
 *
 * Inside warden's binary, tlsmod.c defines the functions below of tls.h,
 * post.h and intercept.h, each a call through the module's table, and
 * post_ready, the load itself (a webhook's or a stream's setup: its first
 * POST would otherwise load the module on a thread mid-session). Tests and
 * benchmarks link the TLS code itself (the warden-tls-code library) and call
 * it directly. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

#include "../common/err.h"
#include "intercept.h"
#include "post.h"
#include "tls.h"

/* Changed with struct tlsmod: a table of another layout is refused. */
#define TLSMOD_ABI 1

struct tlsmod {
	unsigned abi;   /* TLSMOD_ABI */
	size_t size;    /* sizeof (struct tlsmod) */
	/* once, before anything else: libcrypto set up without its atexit
	 * cleanup (a process about to end gives its memory back anyway) */
	void (*init)(void);
	struct tls_ca *(*ca_new)(const struct net_host *hosts, size_t n, struct werr *e);
	const char *(*ca_pem)(const struct tls_ca *ca);
	void (*ca_free)(struct tls_ca *ca);
	SSL_CTX *(*server_ctx)(struct tls_ca *ca, const struct net_host *h, struct werr *e);
	SSL_CTX *(*client_ctx)(const char *const *extra_ca_files, struct werr *e);
	void (*ctx_free)(SSL_CTX *ctx);
	int (*intercept_start)(struct intercept_job *job, struct werr *e);
	void (*post_once)(const struct post_req *h, struct post_result *d);
};

/* The module's table, the one symbol warden-tls.so exports
 * (tlsmod_entry.c). */
extern const struct tlsmod warden_tlsmod;

/* The module, loaded by the first call (thread-safe; never unloaded).
 * NULL with e filled when it cannot be loaded; a later call tries again. */
const struct tlsmod *tlsmod_get(struct werr *e);

/* Where this process loaded it from, for `warden doctor`: "the cache's
 * copy" or "a sealed memfd"; NULL while it is not loaded. */
const char *tlsmod_source(void);
