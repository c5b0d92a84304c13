/* tlsmod_entry.c - the TLS module's one exported symbol: its table of
 * functions (tlsmod.h), in warden-tls.so and in the programs that link the
 * TLS code itself. */
#include "tlsmod.h"

#include <openssl/crypto.h>

/* libcrypto frees all it set up (names, providers, config) from an atexit
 * handler by default: the process is about to give its memory back anyway,
 * and a session that made a TLS proxy would spend a few percent of its CPU
 * on it after the sandbox has ended. */
static void init(void)
{
	OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

__attribute__((visibility("default"))) const struct tlsmod warden_tlsmod = {
	.abi = TLSMOD_ABI,
	.size = sizeof(struct tlsmod),
	.init = init,
	.ca_new = tls_ca_new,
	.ca_pem = tls_ca_pem,
	.ca_free = tls_ca_free,
	.server_ctx = tls_server_ctx,
	.client_ctx = tls_client_ctx,
	.ctx_free = tls_ctx_free,
	.intercept_start = intercept_start,
	.post_once = post_once,
};
