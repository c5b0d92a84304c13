/* program.c - what really runs when an exec names a loader or an
 * interpreter (program.h): the program `ld.so PROGRAM` or valgrind maps,
 * the script `python3 x.py` runs, and a file's #! line. Pure: argv and
 * bytes in. */
#include "program.h"

#include <stdio.h>
#include <string.h>

#include "../../common/glob.h"
#include "../../common/util.h"

/* The dynamic loader run as a program (`ld.so PROGRAM`): it maps PROGRAM
 * itself, never execs it. */
bool exec_is_loader(const char *resolved)
{
	const char *base = strrchr(resolved, '/');
	base = base ? base + 1 : resolved;
	return glob_match("ld-linux*.so*", base) || glob_match("ld64.so*", base) ||
	       glob_match("ld-*.so*", base) || strcmp(base, "ld.so") == 0;
}

/* A valgrind tool (`/usr/libexec/valgrind/memcheck-amd64-linux`, which
 * valgrind's launcher execs): it maps the program it is given itself. */
bool exec_is_valgrind(const char *resolved)
{
	const char *base = strrchr(resolved, '/');
	if (!base || base - resolved < 9 || strncmp(base - 9, "/valgrind", 9) != 0)
		return false;
	return glob_match("*-*-linux", base + 1);
}

/* As valgrind reads its command line: its options are one word each
 * (`--tool=none`, `-q`); the first word that is not one is the program;
 * --help and --version end it. */
static const char *valgrind_program(const struct strv *argv)
{
	for (size_t i = 1; i < argv->n; i++) {
		const char *a = argv->v[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "--version") == 0 ||
		    strcmp(a, "--help-debug") == 0)
			return NULL;
		if (a[0] != '-')
			return a;
	}
	return NULL;
}

static bool one_of(const char *a, const char *const *v, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (strcmp(a, v[k]) == 0)
			return true;
	return false;
}

/* As glibc's loader reads its command line (rtld.c): an option that takes
 * a value takes the next argument when there is one; the flags; --version
 * ends it. Anything else is the program, an option it does not know too:
 * glibc 2.36 refuses one, an older loader runs a file of that name (so it
 * is judged as one; "--": the next argument). */
const char *exec_loader_program(const struct strv *argv)
{
	static const char *const with_value[] = { "--library-path", "--inhibit-rpath", "--audit",
		"--preload", "--argv0", "--glibc-hwcaps-prepend", "--glibc-hwcaps-mask" };
	static const char *const flags[] = { "--list", "--verify", "--inhibit-cache",
		"--list-tunables", "--list-diagnostics", "--help" };
	for (size_t i = 1; i < argv->n; i++) {
		const char *a = argv->v[i];
		if (one_of(a, with_value, ARRAY_LEN(with_value)) && i + 1 < argv->n) {
			i++;
			continue;
		}
		if (one_of(a, flags, ARRAY_LEN(flags)))
			continue;
		if (strcmp(a, "--version") == 0)
			return NULL;
		if (strcmp(a, "--") == 0)
			return i + 1 < argv->n ? argv->v[i + 1] : NULL;
		return a;
	}
	return NULL;
}

void exec_shebang_argv(const char *line, const char *script, const struct strv *argv,
		       struct strv *out)
{
	const char *p = line + strspn(line, " \t");
	size_t n = strcspn(p, " \t");
	strv_push_owned(out, xasprintf("%.*s", (int)n, p));
	p += n;
	p += strspn(p, " \t");
	size_t m = strlen(p);
	/* as the kernel's load_script: spaces and tabs only (a '\r' stays) */
	while (m > 0 && (p[m - 1] == ' ' || p[m - 1] == '\t'))
		m--;
	if (m)
		strv_push_owned(out, xasprintf("%.*s", (int)m, p));
	strv_push(out, script);
	for (size_t i = 1; i < argv->n; i++)
		strv_push(out, argv->v[i]);
}

const char *exec_program_of(const char *resolved, const struct strv *argv, bool *loader)
{
	*loader = true;
	if (exec_is_loader(resolved))
		return exec_loader_program(argv);
	if (exec_is_valgrind(resolved))
		return valgrind_program(argv);
	*loader = false;
	return exec_script_of(resolved, argv);
}

void exec_shebang_path(const char *line, char out[HASH_HEAD_LEN])
{
	snprintf(out, HASH_HEAD_LEN, "%s", line + strspn(line, " \t"));
	out[strcspn(out, " \t")] = '\0';
}

bool exec_argv_same(const struct strv *argv, bool truncated, size_t skip, const char *got,
		    size_t len)
{
	size_t words = 0;
	for (size_t k = 0; k < len; k += strnlen(got + k, len - k) + 1)
		words++;
	_cleanup_free_ size_t *at = xcalloc(words + 1, sizeof *at);
	for (size_t k = 0, i = 0; k < len; k += strnlen(got + k, len - k) + 1)
		at[i++] = k;
	size_t need = skip ? skip + argv->n - 1 : argv->n;
	if (truncated ? words < need : words != need)
		return false;
	/* argv's first is the kernel's own word for a script: not compared */
	for (size_t i = skip ? 1 : 0; i < argv->n; i++) {
		size_t idx = skip ? skip + i - 1 : i;
		const char *w = got + at[idx];
		size_t wl = strnlen(w, len - at[idx]), al = strlen(argv->v[i]);
		/* cut to warden's bounds, an argument is a prefix of the one run */
		if (wl < al || memcmp(w, argv->v[i], al) != 0 || (!truncated && wl != al))
			return false;
	}
	return true;
}

/* A common interpreter given a script by name (`python3 prog.py`, `sh
 * prog.sh`): the script is the program that runs. The first argument that
 * is not an option; none when the code comes another way (-c, -e, -m, a
 * lone -). Options that take a separate value are few enough among these to
 * be named. */
const char *exec_script_of(const char *resolved, const struct strv *argv)
{
	/* each family, and its options that give the code inline (space
	 * separated) */
	static const struct {
		const char *name, *inline_code;
	} interpreters[] = {
		{ "sh", " -c -s -i " }, { "bash", " -c -s -i " }, { "dash", " -c -s -i " },
		{ "zsh", " -c -s -i " }, { "ksh*", " -c -s -i " }, { "mksh", " -c -s -i " },
		{ "fish", " -c -i " }, { "python*", " -c -m - -i " }, { "perl*", " -e -E - " },
		{ "ruby*", " -e - " }, { "node", " -e --eval -p --print -i - " },
		{ "nodejs", " -e --eval -p --print -i - " }, { "php*", " -r -a - " },
		{ "lua*", " -e -i - " }, { "tclsh*", " - " }, { "Rscript", " -e - " },
	};
	static const char *const with_value[] = { "-W", "-X", "-I", "-o", "-O", "--require",
		"--import", "--loader" };
	const char *base = strrchr(resolved, '/');
	base = base ? base + 1 : resolved;
	const char *inline_code = NULL;
	for (size_t i = 0; i < ARRAY_LEN(interpreters) && !inline_code; i++)
		if (glob_match(interpreters[i].name, base))
			inline_code = interpreters[i].inline_code;
	if (!inline_code)
		return NULL;
	for (size_t i = 1; i < argv->n; i++) {
		const char *a = argv->v[i];
		char word[64];
		snprintf(word, sizeof word, " %s ", a);
		if (strlen(a) < sizeof word - 2 && strstr(inline_code, word))
			return NULL;
		if (strcmp(a, "--") == 0)
			return i + 1 < argv->n ? argv->v[i + 1] : NULL;
		if (a[0] != '-')
			return a;
		for (size_t k = 0; k < ARRAY_LEN(with_value); k++)
			if (strcmp(a, with_value[k]) == 0)
				i++;
	}
	return NULL;
}

/* The #! line of a file's first bytes, or "". */
void exec_shebang(const char *head, size_t len, char out[HASH_HEAD_LEN])
{
	out[0] = '\0';
	if (len < 3 || head[0] != '#' || head[1] != '!')
		return;
	size_t n = len - 2;
	if (n > HASH_HEAD_LEN - 1)
		n = HASH_HEAD_LEN - 1;
	memcpy(out, head + 2, n);
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
}
