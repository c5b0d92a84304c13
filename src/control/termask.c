/* termask.c - the user's terminal as a channel of the broker (termask.h): a
 * queue of the questions it was told of, the first drawn with ECMA-48
 * sequences over the bottom lines of the screen (cursor saved with DECSC,
 * given back with DECRC), the agent's output held in a buffer meanwhile,
 * a timer for the seconds left, and a small reader of what the terminal
 * sends, which finds the keys among the escape sequences it skips whole. */
#include "termask.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/sbuf.h"
#include "../common/util.h"

#define ESC "\x1b"
#define KEY_ESCAPE 0x1b

/* Where the reader is in what the terminal sends. */
enum {
	K_GROUND,
	K_ESC,      /* after ESC */
	K_CSI,      /* ESC [ (or 0x9b) parameters and intermediates, up to a final byte */
	K_SS3,      /* ESC O: one more byte */
	K_STR,      /* OSC, DCS, SOS, PM, APC: up to BEL or ST */
	K_STR_ESC,  /* ESC inside one: ST when '\' follows */
	K_SKIP,     /* an X10 mouse report's three bytes after ESC [ M */
	K_PASTE,    /* a bracketed paste, up to ESC [ 201 ~ */
};

struct termask {
	struct approvals *a;
	struct termask_out out;
	int tty, master, timer;
	char who[64];                     /* the terminal's name, or "" */
	const struct question **queue;    /* in the order asked; [0] on the screen when up */
	size_t nqueue, capqueue;
	bool up;
	struct timespec shown;            /* CLOCK_MONOTONIC */
	int top, lines;                   /* the rows drawn: the first (from 1) and how many */
	char *held;                       /* the agent's output while a question is up */
	size_t nheld, capheld;
	unsigned long long dropped;       /* past TERMASK_HOLD_MAX */
	/* the reader */
	int kstate;
	char csi[8];
	size_t ncsi;
	unsigned kskip;
	size_t paste_end;                 /* how much of ESC [ 201 ~ was seen */
};

static int64_t ns_between(const struct timespec *from, const struct timespec *to)
{
	return (int64_t)(to->tv_sec - from->tv_sec) * 1000000000 + (to->tv_nsec - from->tv_nsec);
}

static bool armed(const struct termask *t)
{
	struct timespec now = mono_now();
	return ns_between(&t->shown, &now) >= (int64_t)TERMASK_ARM_MS * 1000000;
}

/* ---- text for the screen ---- */

/* One byte as the screen shows it: printable ASCII as itself, a backslash
 * doubled, anything else (controls, escapes, bytes of other encodings)
 * as \xNN: nothing the question holds can move the cursor or hide. */
static size_t shown_byte(unsigned char c, char out[5])
{
	if (c == '\\')
		return (size_t)snprintf(out, 5, "\\\\");
	if (c >= 0x20 && c < 0x7f) {
		out[0] = (char)c;
		out[1] = '\0';
		return 1;
	}
	return (size_t)snprintf(out, 5, "\\x%02x", c);
}

/* s as the screen shows it, cut to width columns. */
static void add_cut(struct sbuf *b, const char *s, size_t width)
{
	size_t used = 0;
	for (; *s; s++) {
		char tok[5];
		size_t n = shown_byte((unsigned char)*s, tok);
		if (used + n > width)
			break;
		sb_put(b, tok, n);
		used += n;
	}
}

/* s as the screen shows it, in lines of at most width columns (a \xNN
 * never split), into lines; at least one. */
static void wrap(const char *s, size_t width, struct strv *lines)
{
	struct sbuf line = { 0 };
	size_t used = 0;
	sb_puts(&line, "");
	for (; *s; s++) {
		char tok[5];
		size_t n = shown_byte((unsigned char)*s, tok);
		if (used + n > width && used) {
			strv_push(lines, line.p);
			line.n = 0;
			line.p[0] = '\0';
			used = 0;
		}
		sb_put(&line, tok, n);
		used += n;
	}
	strv_push(lines, line.p);
	free(line.p);
}

/* ---- the screen ---- */

/* The user's terminal's size, within sane bounds (24x80 when it has none). */
static void screen_size(const struct termask *t, int *rows, int *cols)
{
	struct winsize ws;
	*rows = 24;
	*cols = 80;
	if (ioctl(t->tty, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row > 1000 ? 1000 : ws.ws_row;
		*cols = ws.ws_col > 1000 ? 1000 : ws.ws_col;
	}
}

/* n bytes to the user's terminal (termask_out) */
static void out_write(const struct termask *t, const char *p, size_t n)
{
	if (!n)
		return;
	if (t->out.put)
		t->out.put(t->out.ctx, p, n);
	else if (write_all(t->out.fd, p, n) < 0) { /* the user's terminal is gone */ }
}

static void put(const struct termask *t, const struct sbuf *b)
{
	out_write(t, b->p, b->n);
}

/* The question in front, drawn (again) over the bottom lines. */
static void draw(struct termask *t)
{
	if (!t->up || !t->nqueue)
		return;
	const struct question *q = t->queue[0];
	int rows, cols;
	screen_size(t, &rows, &cols);
	/* the last column stays empty: nothing wraps, nothing scrolls */
	size_t width = cols > 1 ? (size_t)cols - 1 : 1;
	struct timespec now = mono_now();
	int64_t left_ns = ns_between(&now, &q->deadline);
	long left = left_ns > 0 ? (long)((left_ns + 999999999) / 1000000000) : 0;

	char head[256], more[48] = "";
	if (t->nqueue > 1)
		snprintf(more, sizeof more, ", %zu more waiting", t->nqueue - 1);
	snprintf(head, sizeof head, " warden asks (%s, id %s): %ld s left%s ", q->kind_name, q->id, left,
		 more);
	char keys[256];
	int k = snprintf(keys, sizeof keys, "%s",
			 armed(t) ? " [y] yes once   [s] yes, this session   [n] no (or Enter, Esc)"
				  : " (the keys count in a moment)");
	if (t->nheld || t->dropped)
		k += snprintf(keys + k, sizeof keys - (size_t)k, "   | the agent's output held: %zu KiB",
			      (t->nheld + 1023) / 1024);
	if (t->dropped && k > 0 && (size_t)k < sizeof keys)
		snprintf(keys + k, sizeof keys - (size_t)k, ", %llu bytes dropped", t->dropped);

	/* the summary indented by two, when there is room for it */
	size_t indent = width > 4 ? 2 : 0, sumw = width - indent;
	_cleanup_strv_ struct strv sum = { 0 };
	wrap(q->summary, sumw, &sum);
	/* header, summary, keys; on a screen too short, the summary is cut
	 * (and says so), then the header goes, then the summary */
	size_t nsum = sum.n, rws = (size_t)rows;
	bool header = true, cut = false;
	if (nsum + 2 > rws) {
		size_t room = rws >= 3 ? rws - 2 : 1;
		cut = nsum > room;
		nsum = cut ? room : nsum;
		header = nsum + 2 <= rws;
		nsum = nsum + 1 <= rws ? nsum : 0;
	}
	int n = (header ? 1 : 0) + (int)nsum + 1;
	int top = rows - n + 1;

	struct sbuf b = { 0 };
	/* The first drawing of a question: CAN ends any sequence the screen
	 * was in, DECSC saves the agent's cursor, attributes and charsets. */
	if (!t->lines)
		sb_puts(&b, "\x18" ESC "7");
	int from = t->lines && t->top < top ? t->top : top;
	from = from < 1 ? 1 : from > rows ? rows : from;
	/* plain attributes, ASCII in G0 and G0 in use; what the question
	 * covered, or covers now, erased */
	sb_printf(&b, ESC "[0m" ESC "(B\x0f" ESC "[%d;1H" ESC "[J", from);
	int row = top;
	if (header) {
		sb_printf(&b, ESC "[%d;1H" ESC "[7m", row++);
		add_cut(&b, head, width);
		sb_puts(&b, ESC "[0m");
	}
	for (size_t i = 0; i < nsum; i++) {
		sb_printf(&b, ESC "[%d;1H" ESC "[1m%.*s", row++, (int)indent, "  ");
		if (cut && i + 1 == nsum)
			add_cut(&b, "... (cut here: `warden approve list` shows it whole)", sumw);
		else
			sb_puts(&b, sum.v[i]);
		sb_puts(&b, ESC "[0m");
	}
	sb_printf(&b, ESC "[%d;1H", row);
	add_cut(&b, keys, width);
	put(t, &b);
	free(b.p);
	t->top = top;
	t->lines = n;
}

/* The agent's pty one row (or column) smaller and back: two SIGWINCH to
 * its foreground, for full-screen programs to draw their screen again
 * (a size set to what it is sends none). */
static void nudge(const struct termask *t)
{
	struct winsize ws, smaller;
	if (t->master < 0 || ioctl(t->master, TIOCGWINSZ, &ws) < 0)
		return;
	smaller = ws;
	if (ws.ws_row > 1)
		smaller.ws_row--;
	else if (ws.ws_col > 1)
		smaller.ws_col--;
	else
		return;
	ioctl(t->master, TIOCSWINSZ, &smaller);
	ioctl(t->master, TIOCSWINSZ, &ws);
}

/* The question in front off the screen: its lines erased, the agent's
 * cursor back, the held output written, the agent told to redraw. */
static void take_down(struct termask *t)
{
	if (!t->up)
		return;
	struct sbuf b = { 0 };
	if (t->lines) {
		int rows, cols;
		screen_size(t, &rows, &cols);
		int top = t->top < 1 ? 1 : t->top > rows ? rows : t->top;
		sb_printf(&b, ESC "[0m" ESC "[%d;1H" ESC "[J" ESC "8", top);
	}
	t->up = false;
	t->lines = 0;
	timerfd_settime(t->timer, 0, &(struct itimerspec){ 0 }, NULL);
	put(t, &b);
	free(b.p);
	out_write(t, t->held, t->nheld);
	free(t->held);
	t->held = NULL;
	t->nheld = t->capheld = 0;
	t->dropped = 0;
	nudge(t);
}

/* The question in front on the screen, if none is. */
static void show(struct termask *t)
{
	if (t->up || !t->nqueue)
		return;
	t->up = true;
	t->lines = 0;
	t->shown = mono_now();
	struct itimerspec it = { .it_value = { .tv_nsec = (long)TERMASK_ARM_MS * 1000000 },
				 .it_interval = { .tv_sec = 1 } };
	timerfd_settime(t->timer, 0, &it, NULL);
	draw(t);
}

/* ---- the broker's channel ---- */

static void ch_asked(void *ctx, const struct question *q)
{
	struct termask *t = ctx;
	if (t->nqueue == t->capqueue) {
		t->capqueue = t->capqueue ? t->capqueue * 2 : 8;
		t->queue = xrealloc(t->queue, t->capqueue * sizeof *t->queue);
	}
	t->queue[t->nqueue++] = q;
	if (t->up)
		draw(t); /* one more waiting */
	else
		show(t);
}

static void ch_ended(void *ctx, const struct question *q, bool allow, const char *by)
{
	struct termask *t = ctx;
	size_t i = 0;
	while (i < t->nqueue && t->queue[i] != q)
		i++;
	if (i == t->nqueue)
		return;
	bool front = i == 0 && t->up;
	if (front)
		take_down(t);
	memmove(&t->queue[i], &t->queue[i + 1], (t->nqueue - i - 1) * sizeof *t->queue);
	t->nqueue--;
	if (front)
		show(t);
	else
		draw(t);
}

/* The user's answer to the question in front. */
static void answer(struct termask *t, bool allow, enum approval_scope scope)
{
	char id[sizeof t->queue[0]->id];
	memcpy(id, t->queue[0]->id, sizeof id);
	struct approval_answer ans = { .allow = allow, .scope = scope, .by = "terminal",
				       .who = t->who[0] ? t->who : NULL };
	/* its end comes back through ch_ended, which takes it down */
	if (approvals_answer(t->a, id, &ans) == 0)
		return;
	/* not open any more (its end not told here): off the screen anyway */
	if (t->nqueue && strcmp(t->queue[0]->id, id) == 0)
		ch_ended(t, t->queue[0], false, "gone");
}

/* What key k (a byte, or KEY_ESCAPE) does: true when it answered. */
static bool on_key(struct termask *t, int k)
{
	if (!t->up || !t->nqueue || !armed(t))
		return false;
	switch (k) {
	case 'y':
	case 'Y':
		answer(t, true, SCOPE_ONCE);
		return true;
	case 's':
	case 'S':
		answer(t, true, SCOPE_SESSION);
		return true;
	case 'n':
	case 'N':
	case '\r':
	case '\n':
	case 0x03: /* Ctrl-C */
	case KEY_ESCAPE:
		answer(t, false, SCOPE_ONCE);
		return true;
	default:
		return false;
	}
}

static void csi_start(struct termask *t)
{
	t->kstate = K_CSI;
	t->ncsi = 0;
}

/* The states' steps: each takes one byte c (last: nothing follows it in
 * this read) and returns a key, or 0 when it is part of a sequence. */

static int k_ground(struct termask *t, unsigned char c, bool last)
{
	if (c == 0x1b) {
		/* alone: the Escape key; else a sequence starts */
		if (last)
			return KEY_ESCAPE;
		t->kstate = K_ESC;
		return 0;
	}
	/* 8-bit controls (a terminal told to send them: S8C1T) */
	if (c == 0x9b)
		csi_start(t);
	else if (c == 0x8f)
		t->kstate = K_SS3;
	else if (c == 0x90 || c == 0x98 || c == 0x9d || c == 0x9e || c == 0x9f)
		t->kstate = K_STR;
	return c >= 0x80 ? 0 : c;
}

static int k_esc(struct termask *t, unsigned char c, bool last)
{
	t->kstate = K_GROUND;
	if (c == '[')
		csi_start(t);
	else if (c == 'O')
		t->kstate = K_SS3;
	else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_')
		t->kstate = K_STR;
	else if (c == 0x1b && !last)
		t->kstate = K_ESC; /* ESC ESC ...: Alt and a sequence */
	else if (c == 0x1b)
		return KEY_ESCAPE;
	/* else Alt and a key: nothing */
	return 0;
}

static int k_csi(struct termask *t, unsigned char c)
{
	if (c >= 0x40 && c <= 0x7e) {
		t->kstate = K_GROUND;
		if (c == 'M' && t->ncsi == 0) {
			t->kstate = K_SKIP; /* X10 mouse: button, column, row follow */
			t->kskip = 3;
		} else if (c == '~' && t->ncsi == 3 && memcmp(t->csi, "200", 3) == 0) {
			t->kstate = K_PASTE;
			t->paste_end = 0;
		}
	} else if (c >= 0x20 && c <= 0x3f) {
		if (t->ncsi < sizeof t->csi)
			t->csi[t->ncsi] = (char)c;
		t->ncsi += t->ncsi <= sizeof t->csi; /* past the end: matches nothing */
	} else if (c == 0x1b) {
		t->kstate = K_ESC;
	} else if (c < 0x20) {
		t->kstate = K_GROUND; /* a control ends it, as a terminal would */
	}
	return 0;
}

static int k_paste(struct termask *t, unsigned char c)
{
	static const char end[] = ESC "[201~";
	if (c == (unsigned char)end[t->paste_end]) {
		if (++t->paste_end == sizeof end - 1)
			t->kstate = K_GROUND;
	} else {
		t->paste_end = c == 0x1b ? 1 : 0;
	}
	return 0;
}

/* One byte c the terminal sent (last: nothing follows it in this read): a
 * key, or 0 when it is part of a sequence (or starts one). */
static int reader(struct termask *t, unsigned char c, bool last)
{
	switch (t->kstate) {
	case K_GROUND:
		return k_ground(t, c, last);
	case K_ESC:
		return k_esc(t, c, last);
	case K_CSI:
		return k_csi(t, c);
	case K_SS3:
		t->kstate = K_GROUND;
		return 0;
	case K_STR:
		if (c == 0x07 || c == 0x9c || c == 0x18 || c == 0x1a)
			t->kstate = K_GROUND;
		else if (c == 0x1b)
			t->kstate = K_STR_ESC;
		return 0;
	case K_STR_ESC:
		if (c == '\\') {
			t->kstate = K_GROUND;
			return 0;
		}
		t->kstate = K_ESC;
		return reader(t, c, last);
	case K_SKIP:
		/* a UTF-8 coordinate (mode 1005) is one however many bytes */
		if ((c & 0xc0) != 0x80 && --t->kskip == 0)
			t->kstate = K_GROUND;
		return 0;
	case K_PASTE:
		return k_paste(t, c);
	default:
		t->kstate = K_GROUND;
		return 0;
	}
}

/* ---- the interface ---- */

bool termask_up(const struct termask *t)
{
	return t && t->up;
}

int termask_keys(struct termask *t, int fd)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 1 : -1;
	if (n == 0)
		return 0;
	for (size_t i = 0; i < (size_t)n && t->up; i++) {
		int k = reader(t, (unsigned char)buf[i], i + 1 == (size_t)n);
		if (k && on_key(t, k)) {
			/* the rest of this read was typed on the way: dropped */
			t->kstate = K_GROUND;
			break;
		}
	}
	return 1;
}

bool termask_hold(void *ctx, const char *buf, size_t n)
{
	struct termask *t = ctx;
	if (!t || !t->up)
		return false;
	size_t take = TERMASK_HOLD_MAX - t->nheld;
	take = n < take ? n : take;
	if (t->nheld + take > t->capheld) {
		size_t cap = t->capheld ? t->capheld : 16384;
		while (cap < t->nheld + take)
			cap *= 2;
		t->capheld = cap < TERMASK_HOLD_MAX ? cap : TERMASK_HOLD_MAX;
		t->held = xrealloc(t->held, t->capheld);
	}
	memcpy(t->held + t->nheld, buf, take);
	t->nheld += take;
	t->dropped += n - take;
	return true;
}

void termask_resize(struct termask *t)
{
	if (t && t->up)
		draw(t);
}

int termask_timer_fd(const struct termask *t)
{
	return t->timer;
}

static void on_timer(struct loop *l, const struct source *src, uint32_t events)
{
	termask_on_timer(src->ctx);
}

int termask_watch(struct loop *l, struct termask *t, struct werr *e)
{
	return loop_add(l, "the terminal questions' timer", t->timer, on_timer, t, e);
}

void termask_on_timer(struct termask *t)
{
	uint64_t ticks;
	(void)!read(t->timer, &ticks, sizeof ticks);
	draw(t);
}

struct termask *termask_new(struct approvals *a, const struct termask_out *out, int tty,
			    int master, struct werr *e)
{
	int timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (timer < 0) {
		werr_errno(e, "the terminal's questions: a timer");
		return NULL;
	}
	struct termask *t = xcalloc(1, sizeof *t);
	*t = (struct termask){ .a = a, .out = *out, .tty = tty, .master = master, .timer = timer };
	if (ttyname_r(tty, t->who, sizeof t->who) != 0)
		t->who[0] = '\0';
	approvals_add_channel(a, &(struct approval_channel){ .name = "terminal", .asked = ch_asked,
							     .ended = ch_ended, .ctx = t });
	return t;
}

void termask_free(struct termask *t)
{
	if (!t)
		return;
	take_down(t);
	free(t->queue);
	free(t->held);
	close(t->timer);
	free(t);
}
