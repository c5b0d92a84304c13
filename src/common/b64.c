/* b64.c - standard base64 decoded (b64.h). */
#include "b64.h"

#include <openssl/evp.h>
#include <string.h>

int b64_decode(const char *s, size_t n, unsigned char *out, size_t cap)
{
	if (n == 0 || n % 4 || n / 4 * 3 > cap)
		return -1;
	size_t pad = s[n - 1] == '=' ? (s[n - 2] == '=' ? 2 : 1) : 0;
	if (memchr(s, '=', n - pad))
		return -1;
	int got = EVP_DecodeBlock(out, (const unsigned char *)s, (int)n);
	return got < (int)pad ? -1 : got - (int)pad;
}
