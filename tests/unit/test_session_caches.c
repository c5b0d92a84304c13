/* test_session_caches.c - unit tests of the names of the caches kept for a
 * workspace (src/session/caches.c): a cache's directory name read back
 * only when the encoding makes it (so the file naming the workspace, and
 * any name planted beside, is no cache), the workspace's key, and where
 * the caches live. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/session/caches.h"
#include "check.h"

static void decoded(const char *name, const char *want)
{
	char *got = caches_decode(name);
	checks++;
	if (want ? !got || strcmp(got, want) != 0 : got != NULL) {
		fprintf(stderr, "caches_decode(\"%s\"): \"%s\", want \"%s\"\n", name,
			got ? got : "(null)", want ? want : "(null)");
		failures++;
	}
	free(got);
}

static void test_decode(void)
{
	decoded(".cargo%2Fregistry", ".cargo/registry");
	decoded(".npm", ".npm");
	decoded("a%25b", "a%b");
	decoded("a%252Fb", "a%2Fb");
	decoded(CACHES_WORKSPACE_FILE, NULL);
	decoded("a%2fb", NULL);
	decoded("a%2", NULL);
	decoded("%2Fetc", NULL);
	decoded("a%2F%2Fb", NULL);
	decoded("a%2F..%2Fb", NULL);
	decoded("..", NULL);
	decoded(".", NULL);
	decoded("", NULL);
}

static void test_key_and_base(void)
{
	char key[CACHES_KEY_LEN + 1];
	caches_key("/src/app", key);
	/* printf %s /src/app | sha256sum */
	CHECK(strcmp(key, "c0167fc91cc666ffa066a8e6f954029d") == 0);
	CHECK(strlen(key) == CACHES_KEY_LEN);
	caches_key("/src/app2", key);
	CHECK(strcmp(key, "c0167fc91cc666ffa066a8e6f954029d") != 0);
	unsetenv("XDG_DATA_HOME");
	char *b = caches_base("/home/u");
	CHECK(b && strcmp(b, "/home/u/.local/share/warden/caches") == 0);
	free(b);
	setenv("XDG_DATA_HOME", "/data/", 1);
	b = caches_base("/home/u");
	CHECK(b && strcmp(b, "/data/warden/caches") == 0);
	free(b);
	setenv("XDG_DATA_HOME", "relative", 1);
	CHECK(caches_base(NULL) == NULL);
	unsetenv("XDG_DATA_HOME");
}

int main(void)
{
	test_decode();
	test_key_and_base();
	return check_status_counted("session_caches");
}
