#!/usr/bin/env bash
# tests/docs/links.sh [SRCDIR] - the Markdown documentation holds together:
# in README.md, HACKING.md, bench/README.md and doc/*.md, every relative link
# names a file or directory that exists and, for FILE.md#ANCHOR (or #ANCHOR
# alone), a heading of that file (GitHub's anchors: lowercase, punctuation
# dropped, spaces to '-', a repeated heading gets -1, -2, ...); every test
# cited in brackets names a test that exists ([test_NAME] an integration
# test function in tests/ or a unit test program tests/unit/test_NAME.c,
# [test_FILE: test_FN] a function of that program, [test_PREFIX*] at least
# one, [fuzz target NAME] tests/fuzz/fuzz_NAME.c, [unit test NAME], a
# `warden check` probe, a path under tests/, and the named checks of
# tests/package and tests/check); a path under tests/ quoted as code exists;
# and the README is at most 300 lines. Prints each failure; exits 1 on any.
set -uo pipefail
src=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
command -v python3 >/dev/null || { echo "skipped: python3 is not installed"; exit 77; }

exec python3 - "$src" <<'EOF'
import glob, os, re, sys

src = sys.argv[1]
os.chdir(src)
fails = []
def bad(msg):
    fails.append(msg)
    print('FAIL: ' + msg)

docs = ['README.md', 'HACKING.md', 'bench/README.md'] + sorted(glob.glob('doc/*.md'))

def unfenced(text):
    """The text with fenced code blocks blanked (line numbers kept)."""
    out, fence = [], None
    for line in text.split('\n'):
        m = re.match(r'\s*(`{3,}|~{3,})', line)
        if fence is None and m:
            fence = m.group(1)[0] * 3
            out.append('')
        elif fence is not None:
            if line.strip().startswith(fence):
                fence = None
            out.append('')
        else:
            out.append(line)
    return '\n'.join(out)

def no_code_spans(text):
    return re.sub(r'(`+)(?:(?!\1).)+?\1', lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text, flags=re.S)

def anchors(path):
    """GitHub's heading anchors of a Markdown file."""
    seen, out = {}, set()
    for line in unfenced(open(path, encoding='utf-8').read()).split('\n'):
        m = re.match(r' {0,3}#{1,6}\s+(.*?)\s*#*\s*$', line)
        if not m:
            continue
        h = m.group(1)
        h = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', h)   # a link's text
        h = re.sub(r'<[^>]+>', '', h).lower()
        a = re.sub(r'[^\w\- ]', '', h).replace(' ', '-')
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else '%s-%d' % (a, n))
    return out

def lineno(text, pos):
    return text.count('\n', 0, pos) + 1

# --- the tests that exist -------------------------------------------------
int_fns, unit_files, unit_fns, named = set(), set(), {}, set()
for f in glob.glob('tests/**/*.sh', recursive=True):
    t = open(f, encoding='utf-8', errors='replace').read()
    int_fns.update(re.findall(r'^\s*(?:function\s+)?(test_\w+)\s*\(\)', t, re.M))
    named.update(re.findall(r'\b(?:not_)?ok\s+([a-z]\w+)', t))
for f in glob.glob('tests/unit/test_*.c'):
    stem = os.path.basename(f)[:-2]
    unit_files.add(stem)
    unit_fns[stem] = set(re.findall(r'\b(test_\w+)\s*\(', open(f, encoding='utf-8').read()))
all_unit_fns = set().union(*unit_fns.values()) if unit_fns else set()
known = int_fns | unit_files | all_unit_fns
probe_src = ''.join(open(f, encoding='utf-8').read() for f in glob.glob('src/check/*.c'))

def cite_ok(item):
    """None when the cited item names a test (or is no citation), else why not."""
    m = re.fullmatch(r'(test_\w+)(\*?)(?::\s*(.*))?', item, re.S)
    if m:
        name, star, rest = m.groups()
        if star:
            return None if any(k.startswith(name) for k in known) else 'no test starts with %s' % name
        if name not in known:
            return 'no test %s' % name
        inner = re.fullmatch(r'(test_\w+)', (rest or '').strip())
        if name in unit_files and inner and inner.group(1) not in unit_fns[name]:
            return 'no function %s in tests/unit/%s.c' % (inner.group(1), name)
        return None
    m = re.fullmatch(r'fuzz(?: target\s+|-)(\w+)', item)
    if m:
        return None if os.path.isfile('tests/fuzz/fuzz_%s.c' % m.group(1)) else 'no fuzz target %s' % m.group(1)
    m = re.fullmatch(r'unit test\s+([\w-]+)', item)
    if m:
        f = 'tests/unit/test_%s.c' % m.group(1).replace('-', '_')
        return None if os.path.isfile(f) else 'no unit test %s' % m.group(1)
    m = re.fullmatch(r'`warden check` probe `([\w.-]+)`', item)
    if m:
        return None if '"%s"' % m.group(1) in probe_src else 'no warden check probe %s' % m.group(1)
    m = re.fullmatch(r'`?(tests/[\w./-]+?)`?', item)
    if m:
        return None if os.path.exists(m.group(1)) else 'no file %s' % m.group(1)
    return None

# --- each document ----------------------------------------------------------
for doc in docs:
    if not os.path.isfile(doc):
        bad('%s is missing' % doc)
        continue
    raw = open(doc, encoding='utf-8').read()
    text = unfenced(raw)
    here = os.path.dirname(doc)

    # links (code spans are not links)
    plain = no_code_spans(text)
    for m in re.finditer(r'!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)', plain):
        target = m.group(1)
        where = '%s:%d' % (doc, lineno(plain, m.start()))
        if re.match(r'[a-z][a-z0-9+.-]*:', target):   # http:, https:, mailto:
            continue
        path, _, anc = target.partition('#')
        dest = os.path.normpath(os.path.join(here, path)) if path else doc
        if not os.path.exists(dest):
            bad('%s: link to %s: no such file' % (where, target))
            continue
        if anc:
            if not dest.endswith('.md') or os.path.isdir(dest):
                bad('%s: link to %s: an anchor into what is not a Markdown file' % (where, target))
            elif anc not in anchors(dest):
                bad('%s: link to %s: %s has no heading with that anchor' % (where, target, dest))

    # test citations: [ ... ] not followed by '(' (that would be a link)
    for m in re.finditer(r'\[([^\[\]]*)\](?!\()', text):
        body = re.sub(r'\s+', ' ', m.group(1)).strip()
        items = [i.strip() for i in re.split(r'[,;] ', body) if i.strip()]
        where = '%s:%d' % (doc, lineno(text, m.start()))
        idents = [i for i in items if re.fullmatch(r'[a-z]\w*_\w*', i)]
        cites = any(i.startswith('test_') for i in items) or (len(items) >= 2 and len(idents) == len(items))
        for i in items:
            why = cite_ok(i)
            if why:
                bad('%s: [%s]: %s' % (where, i, why))
            elif cites and i in idents and not i.startswith('test_') and i not in known | named:
                bad('%s: [%s]: no test of that name' % (where, i))

    # paths under tests/ quoted as code
    for m in re.finditer(r'`(tests/[\w./-]*?(?:\.(?:c|h|sh|py|json)|/))`', text):
        if re.search(r'[A-Z]{2,}', m.group(1)):   # a placeholder: test_NAME.c
            continue
        if not os.path.exists(m.group(1)):
            bad('%s:%d: `%s` does not exist' % (doc, lineno(text, m.start()), m.group(1)))

n = open('README.md', encoding='utf-8').read().count('\n')
if n > 300:
    bad('README.md has %d lines (at most 300)' % n)
print('%d documents checked, %d failures' % (len(docs), len(fails)))
sys.exit(1 if fails else 0)
EOF
