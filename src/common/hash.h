/* hash.h - SHA-256 as lowercase hex, the one digest the tree uses (audit
 * chain, policy digest, later executable hashes). */
#pragma once
#include <stddef.h>

#define SHA256_HEX_LEN 65 /* 64 digits and the NUL */

void sha256_hex(const void *buf, size_t len, char out[SHA256_HEX_LEN]);
