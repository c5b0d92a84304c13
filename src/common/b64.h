/* b64.h - standard base64, padded, decoded by libcrypto's encoding layer
 * (EVP_DecodeBlock, no provider), which counts the padding in: the hashed
 * names of known_hosts (src/session/knownhosts.c) and an SSH public key's
 * blob (src/workspace/gitsign.c). */
#pragma once
#include <stddef.h>

/* s (n characters, a multiple of 4, '=' only at its end) into out (cap
 * bytes): its length, or -1 when it is not such base64 or out is short. */
int b64_decode(const char *s, size_t n, unsigned char *out, size_t cap);
