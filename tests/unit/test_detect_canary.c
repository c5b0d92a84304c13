/* test_detect_canary.c - unit tests of the decoys' generator
 * (src/detect/canary.c): each decoy's place, mode and shape (an AWS key id
 * AKIA + 16 upper-case alnum and a 40-character secret, a gho_ token of 36
 * alnum, a .env with an API-key-shaped token, an OpenSSH private key block
 * and its public key), the tokens found in the text they are from, two sets
 * different, the proxy's scanner holding every token bound to no host, and
 * canary_skip_covered turning off what a bind of the session covers; and
 * canary_place writing them into a directory with their modes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/detect/canary.h"
#include "check.h"

static bool all_of(const char *s, size_t n, const char *alpha)
{
	if (strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr(alpha, s[i]))
			return false;
	return true;
}

static const char UPALNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
static const char ALNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

static const struct canary *find(const struct canary_set *cs, const char *rel)
{
	for (size_t i = 0; i < cs->n; i++)
		if (strcmp(cs->v[i].rel, rel) == 0)
			return &cs->v[i];
	return NULL;
}

static void shapes(const struct canary_set *cs)
{
	const struct canary *c = find(cs, ".aws/credentials");
	CHECK(c && c->mode == 0600 && c->ntokens == 2);
	if (c && c->ntokens == 2) {
		CHECK(strncmp(c->tokens[0], "AKIA", 4) == 0 && all_of(c->tokens[0] + 4, 16, UPALNUM));
		CHECK(all_of(c->tokens[1], 40, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+"));
		CHECK(strncmp(c->text, "[default]\n", 10) == 0);
		CHECK(strstr(c->text, "aws_access_key_id = AKIA"));
		CHECK(strstr(c->text, "aws_secret_access_key = "));
		CHECK_STR(c->inside, "/home/agent/.aws/credentials");
	}
	c = find(cs, ".config/gh/hosts.yml");
	CHECK(c && c->ntokens == 1);
	if (c && c->ntokens == 1) {
		CHECK(strncmp(c->tokens[0], "gho_", 4) == 0 && all_of(c->tokens[0] + 4, 36, ALNUM));
		CHECK(strncmp(c->text, "github.com:\n", 12) == 0);
		CHECK(strstr(c->text, "oauth_token: gho_") && strstr(c->text, "user: ") &&
		      strstr(c->text, "git_protocol: "));
	}
	c = find(cs, ".env");
	CHECK(c && c->ntokens >= 1 && strstr(c->text, "API_KEY=sk-"));
	c = find(cs, ".ssh/id_ed25519");
	CHECK(c && c->mode == 0600 && c->ntokens >= 1);
	if (c) {
		CHECK(strncmp(c->text, "-----BEGIN OPENSSH PRIVATE KEY-----\n", 36) == 0);
		CHECK(strstr(c->text, "\n-----END OPENSSH PRIVATE KEY-----\n"));
		/* "openssh-key-v1\0" + "none" + "none": the body every such key begins with */
		CHECK(strstr(c->text, "\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"));
		for (size_t j = 0; j < c->ntokens; j++)
			CHECK(strlen(c->tokens[j]) == 70);
	}
	c = find(cs, ".ssh/id_ed25519.pub");
	CHECK(c && c->mode == 0644 && strncmp(c->text, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI", 37) == 0);
	/* every token is in its decoy's text, and in the scanner, bound nowhere */
	size_t nt = 0;
	for (size_t i = 0; i < cs->n; i++)
		for (size_t j = 0; j < cs->v[i].ntokens; j++) {
			nt++;
			CHECK(strstr(cs->v[i].text, cs->v[i].tokens[j]));
			const struct secret *s = secrets_find_phantom(&cs->scan, cs->v[i].tokens[j],
								      strlen(cs->v[i].tokens[j]));
			CHECK(s && s->spec->nhosts == 0 && !s->value &&
			      strcmp(s->spec->name, cs->v[i].inside) == 0);
		}
	CHECK(cs->scan.n == nt && nt >= 7);
}

int main(void)
{
	struct canary_set a, b;
	struct werr e = { 0 };
	CHECK(canary_generate(&a, "/home/agent", &e) == 0);
	CHECK(canary_generate(&b, "/home/agent", &e) == 0);
	shapes(&a);
	shapes(&b);
	CHECK(a.n == b.n);
	for (size_t i = 0; i < a.n && i < b.n; i++) {
		CHECK(strcmp(a.v[i].text, b.v[i].text) != 0);
		for (size_t j = 0; j < a.v[i].ntokens; j++)
			CHECK(!secrets_find_phantom(&b.scan, a.v[i].tokens[j], strlen(a.v[i].tokens[j])));
	}

	/* a bind of the session at .ssh, or above the home, turns decoys off */
	canary_skip_covered(&a, "/home/agent/.ssh");
	canary_skip_covered(&a, "/home/agent/.aws/credentials/x");
	CHECK(find(&a, ".ssh/id_ed25519")->off && find(&a, ".ssh/id_ed25519.pub")->off);
	CHECK(find(&a, ".aws/credentials")->off);
	CHECK(!find(&a, ".env")->off && !find(&a, ".config/gh/hosts.yml")->off);
	canary_skip_covered(&b, "/home");
	for (size_t i = 0; i < b.n; i++)
		CHECK(b.v[i].off);

	/* placed: what is not off, with its mode, its directories made */
	char dir[] = "/tmp/test-canary-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int err = -1;
	unsigned placed = canary_place(&a, fd, &err);
	CHECK(err == 0);
	for (size_t i = 0; i < a.n; i++) {
		struct stat st;
		bool there = fstatat(fd, a.v[i].rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
		CHECK(there == !a.v[i].off && !!(placed & (1u << i)) == !a.v[i].off);
		if (there)
			CHECK((st.st_mode & 07777) == a.v[i].mode && (size_t)st.st_size == strlen(a.v[i].text));
	}
	/* placing again fails (O_EXCL): nothing written over */
	CHECK(canary_place(&a, fd, &err) == 0 && err == EEXIST);
	close(fd);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	canary_free(&a);
	canary_free(&b);
	return check_status();
}
