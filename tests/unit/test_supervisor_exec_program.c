/* test_supervisor_exec_program.c - unit tests of what really runs when an
 * exec names the dynamic loader or a common interpreter
 * (src/supervisor/exec/program.c): the loader by its names and not by
 * look-alikes; the program `ld.so` is given past its options (those that
 * take a value, "--"); the script an interpreter is given by name, none
 * when the code comes inline (-c, -e, -m, a lone -) or the program is no
 * interpreter; a #! line cut at its newline and at HASH_HEAD_LEN. */
#include <string.h>

#include "src/supervisor/exec/program.h"
#include "argv.h"
#include "check.h"


static void test_loader(void)
{
	CHECK(exec_is_loader("/lib64/ld-linux-x86-64.so.2"));
	CHECK(exec_is_loader("/lib/ld-linux-aarch64.so.1"));
	CHECK(exec_is_loader("/lib/ld64.so.1"));
	CHECK(exec_is_loader("/lib/ld-musl-x86_64.so.1"));
	CHECK(exec_is_loader("ld.so"));
	CHECK(!exec_is_loader("/usr/bin/ld"));
	CHECK(!exec_is_loader("/usr/bin/ld.so.conf"));
	CHECK(!exec_is_loader("/usr/bin/python3"));

	struct strv a = ARGV("ld.so", "./x", "arg");
	CHECK_STR(exec_loader_program(&a), "./x");
	a = ARGV("ld.so", "--library-path", "/tmp", "--preload", "p.so", "./x");
	CHECK_STR(exec_loader_program(&a), "./x");
	a = ARGV("ld.so", "--verify", "--", "--x");
	CHECK_STR(exec_loader_program(&a), "--x");
	a = ARGV("ld.so", "--list");
	CHECK(exec_loader_program(&a) == NULL);
	/* an option without its value is no option to glibc: judged as the
	 * program (nothing of that name runs, and warden refuses what it
	 * cannot find while exec rules hold) */
	a = ARGV("ld.so", "--argv0");
	CHECK_STR(exec_loader_program(&a), "--argv0");
	/* every option that takes a value: the one a tester slipped past with */
	a = ARGV("ld.so", "--glibc-hwcaps-prepend", "x", "./cpw");
	CHECK_STR(exec_loader_program(&a), "./cpw");
	a = ARGV("ld.so", "--glibc-hwcaps-mask", "x", "--inhibit-rpath", "y", "--audit", "z",
		 "--argv0", "w", "--inhibit-cache", "--list-diagnostics", "./cpw");
	CHECK_STR(exec_loader_program(&a), "./cpw");
	/* an option glibc does not know: an older loader runs a file so named */
	a = ARGV("ld.so", "--no-such-option", "./cpw");
	CHECK_STR(exec_loader_program(&a), "--no-such-option");
	a = ARGV("ld.so", "--help", "./cpw");
	CHECK_STR(exec_loader_program(&a), "./cpw");
	a = ARGV("ld.so", "--version", "./cpw");
	CHECK(exec_loader_program(&a) == NULL);
}

/* What the kernel hands a script's interpreter: its one optional argument
 * (the rest of the #! line), the script, then the script's arguments. */
static void test_shebang_argv(void)
{
	struct strv a = ARGV("./sb.sh", "one", "two");
	struct strv out = { 0 };
	exec_shebang_argv(" /lib64/ld-linux-x86-64.so.2  /w/cpw \t", "./sb.sh", &a, &out);
	CHECK(out.n == 5);
	CHECK_STR(out.v[0], "/lib64/ld-linux-x86-64.so.2");
	CHECK_STR(out.v[1], "/w/cpw");
	CHECK_STR(out.v[2], "./sb.sh");
	CHECK_STR(out.v[3], "one");
	CHECK_STR(exec_loader_program(&out), "/w/cpw");
	strv_free(&out);
	exec_shebang_argv("/bin/sh", "/w/x.sh", &a, &out);
	CHECK(out.n == 4);
	CHECK_STR(out.v[1], "/w/x.sh");
	strv_free(&out);
	exec_shebang_argv("/usr/bin/env python3 -u", "s", &a, &out);
	CHECK_STR(out.v[1], "python3 -u");
	strv_free(&out);
	/* a CRLF script: the kernel keeps the '\r' (its loader opens "x\r") */
	exec_shebang_argv("/lib64/ld-linux-x86-64.so.2 /w/x\r", "s", &a, &out);
	CHECK_STR(out.v[1], "/w/x\r");
	strv_free(&out);
	exec_shebang_argv("/bin/sh \r", "s", &a, &out);
	CHECK(out.n == 5);
	CHECK_STR(out.v[1], "\r");
	strv_free(&out);
}

/* valgrind's tools map the program they are given, as the loader does;
 * the launcher and the rest are not loaders. The chain of a #! line naming
 * a script: each level's command line made from the one before. */
static void test_valgrind_and_chain(void)
{
	CHECK(exec_is_valgrind("/usr/libexec/valgrind/memcheck-amd64-linux"));
	CHECK(exec_is_valgrind("/usr/lib/x86_64-linux-gnu/valgrind/none-amd64-linux"));
	CHECK(!exec_is_valgrind("/usr/bin/valgrind.bin"));
	CHECK(!exec_is_valgrind("/usr/libexec/valgrind/vgpreload_core-amd64-linux.so"));
	CHECK(!exec_is_valgrind("/w/notvalgrind/none-amd64-linux"));
	CHECK(!exec_is_valgrind("none-amd64-linux"));
	bool loader = false;
	struct strv a = ARGV("valgrind.bin", "-q", "--tool=none", "./x", "-q");
	CHECK_STR(exec_program_of("/usr/libexec/valgrind/none-amd64-linux", &a, &loader), "./x");
	CHECK(loader);
	a = ARGV("valgrind", "--version", "./x");
	CHECK(exec_program_of("/usr/libexec/valgrind/none-amd64-linux", &a, &loader) == NULL);
	a = ARGV("valgrind", "-q");
	CHECK(exec_program_of("/usr/libexec/valgrind/none-amd64-linux", &a, &loader) == NULL);
	a = ARGV("ld.so", "./y");
	CHECK_STR(exec_program_of("/lib64/ld-linux-x86-64.so.2", &a, &loader), "./y");
	CHECK(loader);
	a = ARGV("python3", "x.py");
	CHECK_STR(exec_program_of("/usr/bin/python3", &a, &loader), "x.py");
	CHECK(!loader);

	char path[HASH_HEAD_LEN];
	exec_shebang_path(" \t/w/b  -x y", path);
	CHECK_STR(path, "/w/b");
	exec_shebang_path("", path);
	CHECK_STR(path, "");
	/* ./a (#!/w/b) whose /w/b is #!/usr/bin/perl -w: perl -w /w/b ./a one */
	a = ARGV("./a", "one");
	struct strv l1 = { 0 }, l2 = { 0 };
	exec_shebang_argv("/w/b", "./a", &a, &l1);
	exec_shebang_argv("/usr/bin/perl -w", "/w/b", &l1, &l2);
	CHECK(l2.n == 5);
	CHECK_STR(l2.v[0], "/usr/bin/perl");
	CHECK_STR(l2.v[1], "-w");
	CHECK_STR(l2.v[2], "/w/b");
	CHECK_STR(l2.v[3], "./a");
	CHECK_STR(l2.v[4], "one");
	strv_free(&l1);
	strv_free(&l2);
}

/* The arguments a program runs with against those read at its exec. */
static void test_argv_same(void)
{
	struct strv a = ARGV("/bin/echo", "status", "--short");
	static const char got[] = "/bin/echo\0status\0--short\0";
	CHECK(exec_argv_same(&a, false, 0, got, sizeof got - 1));
	static const char swapped[] = "/bin/echo\0push\0--short\0";
	CHECK(!exec_argv_same(&a, false, 0, swapped, sizeof swapped - 1));
	static const char more[] = "/bin/echo\0status\0--short\0x\0";
	CHECK(!exec_argv_same(&a, false, 0, more, sizeof more - 1));
	CHECK(exec_argv_same(&a, true, 0, more, sizeof more - 1));
	static const char fewer[] = "/bin/echo\0status\0";
	CHECK(!exec_argv_same(&a, true, 0, fewer, sizeof fewer - 1));
	static const char argv0[] = "busybox\0status\0--short\0";
	CHECK(!exec_argv_same(&a, false, 0, argv0, sizeof argv0 - 1));
	/* cut to warden's bounds: a prefix */
	struct strv cut = ARGV("/bin/echo", "sta");
	CHECK(exec_argv_same(&cut, true, 0, got, sizeof got - 1));
	CHECK(!exec_argv_same(&cut, false, 0, got, sizeof got - 1));
	/* a script: ./s one two run as sh -e ./s one two (skip 3) */
	struct strv s = ARGV("./s", "one", "two");
	static const char sh[] = "/bin/sh\0-e\0./s\0one\0two\0";
	CHECK(exec_argv_same(&s, false, 3, sh, sizeof sh - 1));
	static const char sh2[] = "/bin/sh\0-e\0./s\0one\0three\0";
	CHECK(!exec_argv_same(&s, false, 3, sh2, sizeof sh2 - 1));
	CHECK(!exec_argv_same(&s, false, 2, sh, sizeof sh - 1));
	/* nothing to read */
	CHECK(!exec_argv_same(&a, false, 0, "", 0));
}

static void test_script(void)
{
	struct strv a = ARGV("python3", "x.py", "-c", "y");
	CHECK_STR(exec_script_of("/usr/bin/python3.12", &a), "x.py");
	a = ARGV("python3", "-X", "dev", "-u", "x.py");
	CHECK_STR(exec_script_of("/usr/bin/python3", &a), "x.py");
	a = ARGV("python3", "-c", "print(1)");
	CHECK(exec_script_of("/usr/bin/python3", &a) == NULL);
	a = ARGV("python3", "-m", "http.server");
	CHECK(exec_script_of("/usr/bin/python3", &a) == NULL);
	a = ARGV("sh", "-");
	CHECK(exec_script_of("/bin/sh", &a) == NULL);
	a = ARGV("bash", "-e", "--", "-script");
	CHECK_STR(exec_script_of("/bin/bash", &a), "-script");
	a = ARGV("node", "--eval", "1");
	CHECK(exec_script_of("/usr/bin/node", &a) == NULL);
	a = ARGV("node", "--require", "r.js", "app.js");
	CHECK_STR(exec_script_of("/usr/bin/node", &a), "app.js");
	a = ARGV("perl", "-E", "say 1");
	CHECK(exec_script_of("/usr/bin/perl5.36", &a) == NULL);
	a = ARGV("cat", "x.py");
	CHECK(exec_script_of("/usr/bin/cat", &a) == NULL);
	a = ARGV("python3");
	CHECK(exec_script_of("/usr/bin/python3", &a) == NULL);
}

static void test_shebang(void)
{
	char out[HASH_HEAD_LEN];
	const char *s = "#!/bin/sh -e\necho hi\n";
	exec_shebang(s, strlen(s), out);
	CHECK_STR(out, "/bin/sh -e");
	exec_shebang("#!", 2, out);
	CHECK_STR(out, "");
	exec_shebang("#!x", 3, out);
	CHECK_STR(out, "x");
	exec_shebang("\x7f" "ELF", 4, out);
	CHECK_STR(out, "");
	exec_shebang("# !/bin/sh\n", 11, out);
	CHECK_STR(out, "");
	char long_line[2 * HASH_HEAD_LEN];
	memset(long_line, 'a', sizeof long_line);
	long_line[0] = '#';
	long_line[1] = '!';
	exec_shebang(long_line, sizeof long_line, out);
	CHECK(strlen(out) == HASH_HEAD_LEN - 1);
}

int main(void)
{
	test_loader();
	test_shebang_argv();
	test_valgrind_and_chain();
	test_argv_same();
	test_script();
	test_shebang();
	return check_status_counted("supervisor-exec-program");
}
