/* test_supervisor_exec_hashdisk.c - unit tests of the exec hashes kept
 * between sessions (src/supervisor/exec/hashdisk.c), as text: a full file
 * of HASHDISK_MAX entries loads whole and each is found by its file's
 * stat; a file warden would not write (one file twice, more entries than
 * the cap, a line not of the format) gives no entry at all; another
 * boot's file gives none; a new entry of a file takes its older one's
 * place, and one more past the cap drops the oldest. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/sbuf.h"
#include "src/common/util.h"
#include "src/supervisor/exec/hashdisk.h"
#include "check.h"

/* n lines of distinct files (inode base + i), the i-th hash i. */
static char *file_of(const char *boot, size_t n, unsigned long long base)
{
	struct sbuf b = { 0 };
	sb_printf(&b, "warden-exec-hashes 1 %s\n", boot);
	for (size_t i = 0; i < n; i++)
		sb_printf(&b, "2049 %llu 1000 1700000000 1 1700000000 2 %064zx - #!/bin/sh\n",
			  base + i, i);
	return b.p ? b.p : xstrdup("");
}

static struct stat key(unsigned long long ino)
{
	return (struct stat){ .st_dev = 2049, .st_ino = (ino_t)ino, .st_size = 1000,
			      .st_mtim = { 1700000000, 1 }, .st_ctim = { 1700000000, 2 } };
}

static size_t count_of(char *text)
{
	struct hashdisk *d = hashdisk_parse("B", text);
	size_t n = hashdisk_count(d);
	hashdisk_close(d);
	return n;
}

static void test_full_file(void)
{
	_cleanup_free_ char *t = file_of("B", HASHDISK_MAX, 100);
	struct hashdisk *d = hashdisk_parse("B", t);
	CHECK(hashdisk_count(d) == HASHDISK_MAX);
	struct hashdisk_entry en;
	struct stat st = key(100 + 7);
	CHECK(hashdisk_find(d, &st, &en) && en.hex[62] == '0' && en.hex[63] == '7' &&
	      en.code_err == ENOEXEC && strcmp(en.interp, "#!/bin/sh") == 0);
	st.st_ctim.tv_nsec = 3; /* the file changed since: not the same */
	CHECK(!hashdisk_find(d, &st, &en));
	hashdisk_close(d);
	_cleanup_free_ char *other = file_of("B", 3, 100);
	CHECK(count_of(other) == 3);
	_cleanup_free_ char *reboot = file_of("A", 3, 100);
	CHECK(count_of(reboot) == 0);
}

static void test_not_warden_s(void)
{
	_cleanup_free_ char *over = file_of("B", HASHDISK_MAX + 1, 100);
	CHECK(count_of(over) == 0);
	/* the same file (device and inode) twice, anywhere in the file */
	_cleanup_free_ char *t = file_of("B", 50, 100);
	_cleanup_free_ char *twice = xasprintf("%s%s", t, strchr(t, '\n') + 1);
	CHECK(count_of(twice) == 0);
	_cleanup_free_ char *bad = xasprintf("%s2049 x\n", t);
	CHECK(count_of(bad) == 0);
	/* a last line cut short (a write that did not finish) is not taken,
	 * the rest is */
	_cleanup_free_ char *cut = xasprintf("%s2049 999 10", t);
	CHECK(count_of(cut) == 50);
}

static void test_put(void)
{
	_cleanup_free_ char *t = file_of("B", HASHDISK_MAX, 100);
	struct hashdisk *d = hashdisk_parse("B", t);
	struct hashdisk_entry en = { .st = key(100 + 5), .code_err = ENOEXEC };
	memset(en.hex, 'a', 64);
	hashdisk_put(d, &en); /* the same file again: in its older one's place */
	CHECK(hashdisk_count(d) == HASHDISK_MAX);
	struct hashdisk_entry got;
	CHECK(hashdisk_find(d, &en.st, &got) && got.hex[0] == 'a');
	CHECK(hashdisk_at(d, HASHDISK_MAX - 1)->st.st_ino == 100 + 5);
	en.st = key(5000); /* a new one past the cap: the oldest goes */
	hashdisk_put(d, &en);
	CHECK(hashdisk_count(d) == HASHDISK_MAX);
	struct stat oldest = key(100);
	CHECK(!hashdisk_find(d, &oldest, &got) && hashdisk_find(d, &en.st, &got));
	/* what is written reads back as the same entries */
	_cleanup_free_ char *text = hashdisk_text(d);
	CHECK(count_of(text) == HASHDISK_MAX);
	hashdisk_close(d);
}

int main(void)
{
	test_full_file();
	test_not_warden_s();
	test_put();
	return check_status_counted("supervisor_exec_hashdisk");
}
