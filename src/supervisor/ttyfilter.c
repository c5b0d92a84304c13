/* ttyfilter.c - the filter of the agent's terminal output (ttyfilter.h).
 *
 * A small ECMA-48 reader: ground text passes at once; an escape sequence is
 * held from its ESC until it ends, then judged whole. CSI: parameters and
 * intermediates up to a final byte. OSC: up to BEL or ST (ESC \). DCS: up
 * to ST. Other escapes: ESC, any intermediates, a final byte. A C0 control
 * inside a CSI, or CAN/SUB anywhere, ends the sequence as the terminal
 * would (the held bytes pass, judged as they are; CAN and SUB themselves
 * pass). ENQ is dropped wherever a terminal would act on it. */
#include "ttyfilter.h"

#include <string.h>

enum {
	S_GROUND,
	S_ESC,      /* after ESC */
	S_ESC_INT,  /* ESC and intermediates */
	S_CSI,
	S_OSC,
	S_OSC_ESC,  /* ESC inside an OSC: ST if '\' follows */
	S_DCS,
	S_DCS_ESC,
	/* an overflowing OSC or DCS, up to its end: */
	S_TITLE,    /* a title: printable bytes pass */
	S_PASS,     /* passed as it comes */
	S_DROP,     /* dropped */
	S_TITLE_ESC, S_PASS_ESC, S_DROP_ESC, /* ... after an ESC in it */
	S_DROP_CSI, /* an overflowing CSI, dropped up to its final byte */
};

#define ESC 0x1b
#define BEL 0x07
#define CAN 0x18
#define SUB 0x1a
/* ENQ makes a terminal send its answerback string as if typed: never
 * passed (it would come back to the agent, or to a question on screen). */
#define ENQ 0x05

void ttyfilter_init(struct ttyfilter *f, bool allow_clipboard, bool drop_queries)
{
	memset(f, 0, sizeof *f);
	f->allow_clipboard = allow_clipboard;
	f->drop_queries = drop_queries;
	f->state = S_GROUND;
}

/* The OSC's number (-1 when it has none) and where its text starts. */
static int osc_number(const char *p, size_t n, size_t *text)
{
	int v = -1;
	size_t i = 0;
	while (i < n && p[i] >= '0' && p[i] <= '9' && i < 6)
		v = (v < 0 ? 0 : v * 10) + (p[i++] - '0');
	*text = i < n && p[i] == ';' ? i + 1 : i;
	return i == n || p[i] == ';' ? v : -1; /* digits, then ';' or the end */
}

static bool printable(unsigned char c)
{
	return (c >= 0x20 && c < 0x7f) || c >= 0xa0;
}

static bool is_title(int v)
{
	return v == 0 || v == 1 || v == 2;
}

/* OSCs that ask the terminal something when a parameter is "?": colours
 * (4, 5, 10-19, 104/105/110-119 resets never ask), the clipboard (52). */
static bool osc_query(int v, const char *text, size_t n)
{
	if (!(v == 4 || v == 5 || (v >= 10 && v <= 19) || v == 52))
		return false;
	for (size_t i = 0; i < n; i++)
		if (text[i] == '?' && (i == 0 || text[i - 1] == ';') && (i + 1 == n || text[i + 1] == ';'))
			return true;
	return false;
}

/* A complete CSI (held: ESC [ params intermediates final): does it ask
 * for an answer? */
static bool csi_query(const char *h, size_t n)
{
	char fin = h[n - 1];
	const char *p = h + 2;
	size_t pn = n - 3;
	char lead = pn && (p[0] == '?' || p[0] == '>' || p[0] == '=') ? p[0] : 0;
	if (fin == 'n') /* DSR, CPR and the private ones */
		return true;
	if (fin == 'c') /* DA1, DA2, DA3 */
		return true;
	if (fin == 'p' && pn >= 1 && p[pn - 1] == '$') /* DECRQM */
		return true;
	if (fin == 'q' && lead == '>') /* XTVERSION */
		return true;
	if (fin == 't' && !lead) {
		int v = 0;
		for (size_t i = 0; i < pn && p[i] >= '0' && p[i] <= '9' && v < 1000; i++)
			v = v * 10 + (p[i] - '0');
		return v == 11 || v == 13 || v == 14 || v == 15 || v == 16 || v == 18 ||
		       v == 19 || v == 20 || v == 21;
	}
	return false;
}

/* A complete CSI query: primary device attributes (CSI c, CSI 0 c), whose
 * answer is CSI ? ... c? */
static bool csi_da1(const char *h, size_t n)
{
	return h[n - 1] == 'c' && (n == 3 || (n == 4 && h[2] == '0'));
}

/* A complete DCS (held: ESC P ... ESC \): a request for an answer? */
static bool dcs_query(const char *h, size_t n)
{
	size_t i = 2;
	while (i < n && ((h[i] >= '0' && h[i] <= '9') || h[i] == ';'))
		i++;
	return i + 1 < n && (h[i] == '$' || h[i] == '+') && h[i + 1] == 'q';
}

static size_t put(char *out, size_t o, const char *p, size_t n)
{
	memcpy(out + o, p, n);
	return o + n;
}

/* A query: dropped (true) when its answer would be lost, else passed and
 * counted, with the device attributes' (da: answered CSI ? ... c) apart:
 * its answer is on its way to the user's keys (pty.c reads those the agent
 * leaves when its session ends). */
static bool drop_query(struct ttyfilter *f, bool da)
{
	if (f->drop_queries) {
		f->dropped++;
		return true;
	}
	f->asked++;
	f->asked_da += da;
	return false;
}

/* Judge the complete held sequence; returns the new output length. */
static size_t judge(struct ttyfilter *f, char *out, size_t o)
{
	const char *h = f->held;
	size_t n = f->nheld;
	f->nheld = 0;
	f->state = S_GROUND;
	if (n >= 2 && h[1] == '[') {
		if (csi_query(h, n) && drop_query(f, csi_da1(h, n)))
			return o;
		return put(out, o, h, n);
	}
	if (n >= 2 && h[1] == 'P') {
		if (dcs_query(h, n) && drop_query(f, false))
			return o;
		return put(out, o, h, n);
	}
	if (n >= 2 && h[1] == ']') {
		/* the body, without ESC ] and the terminator (BEL, or ESC \) */
		size_t tl = h[n - 1] == BEL ? 1 : 2, text;
		const char *body = h + 2;
		size_t bn = n - 2 - tl;
		int v = osc_number(body, bn, &text);
		if (v == 52 && !f->allow_clipboard) {
			f->dropped++;
			return o;
		}
		if (osc_query(v, body + text, bn - text) && drop_query(f, false))
			return o;
		if (is_title(v)) {
			o = put(out, o, h, 2 + text);
			for (size_t i = text; i < bn; i++)
				if (printable((unsigned char)body[i]))
					out[o++] = body[i];
			return put(out, o, h + n - tl, tl);
		}
		return put(out, o, h, n);
	}
	if (n == 2 && h[1] == 'Z' && drop_query(f, true)) /* DECID: answered as DA1 */
		return o;
	return put(out, o, h, n);
}

/* The held sequence cannot go on (too long): decide how it continues. */
static size_t overflow(struct ttyfilter *f, char *out, size_t o)
{
	const char *h = f->held;
	size_t n = f->nheld, text;
	f->nheld = 0;
	if (h[1] == ']') {
		int v = osc_number(h + 2, n - 2, &text);
		if (v == 52 || osc_query(v, h + 2 + text, n - 2 - text)) {
			f->dropped++;
			f->state = S_DROP;
			return o;
		}
		if (is_title(v)) {
			o = put(out, o, h, 2 + text);
			for (size_t i = 2 + text; i < n; i++)
				if (printable((unsigned char)h[i]))
					out[o++] = h[i];
			f->state = S_TITLE;
			return o;
		}
		f->state = S_PASS;
		return put(out, o, h, n);
	}
	/* a CSI, DCS or escape of 4 KiB is nobody's honest output: dropped */
	f->dropped++;
	f->state = h[1] == 'P' ? S_DROP : S_DROP_CSI;
	return o;
}

/* Room for two more bytes (an ST) is always kept: a sequence that would
 * use it overflows first. */
static bool full(const struct ttyfilter *f)
{
	return f->nheld + 2 >= TTYFILTER_HOLD;
}

static size_t hold(struct ttyfilter *f, char c, char *out, size_t o)
{
	f->held[f->nheld++] = c;
	return o;
}

/* An interrupted sequence. An OSC or DCS ends there for the terminal
 * (the string is dispatched as it is), so it is judged as if an ST had
 * come. The start of a CSI or escape is cancelled by the terminal: it is
 * dropped, never passed, since what follows it on the way out may not be
 * what followed it on the way in (a dropped sequence between them) and
 * could complete it into something else. */
static size_t abandon(struct ttyfilter *f, char *out, size_t o)
{
	if (f->nheld >= 2 && (f->held[1] == ']' || f->held[1] == 'P')) {
		f->held[f->nheld++] = ESC; /* full() kept room for it */
		f->held[f->nheld++] = '\\';
		return judge(f, out, o);
	}
	f->nheld = 0;
	f->state = S_GROUND;
	return o;
}

/* One byte in each state: what goes out (from o on; the new o), and
 * *again when the byte is to be read afresh in the state it leads to. */

/* A C0 control that does not interrupt a sequence (CAN, SUB and ESC do):
 * executed, the sequence goes on; ENQ (answerback) never passes. */
static bool c0_inside(unsigned char c)
{
	return c < 0x20 && c != ESC && c != CAN && c != SUB;
}

static size_t c0_pass(unsigned char c, char *out, size_t o)
{
	if (c != ENQ)
		out[o++] = (char)c;
	return o;
}

static size_t step_ground(struct ttyfilter *f, unsigned char c, char *out, size_t o)
{
	if (c == ESC) {
		f->held[0] = (char)c;
		f->nheld = 1;
		f->state = S_ESC;
	} else if (c != ENQ) {
		out[o++] = (char)c;
	}
	return o;
}

static size_t step_esc(struct ttyfilter *f, unsigned char c, char *out, size_t o, bool *again)
{
	if (c0_inside(c))
		return c0_pass(c, out, o); /* executed, the escape goes on */
	if (c == CAN || c == SUB) {
		o = abandon(f, out, o);
		out[o++] = (char)c;
		return o;
	}
	if (c == ESC) {
		*again = true; /* a new escape: this one is cancelled */
		return abandon(f, out, o);
	}
	o = hold(f, (char)c, out, o);
	f->state = c == '[' ? S_CSI : c == ']' ? S_OSC : c == 'P' ? S_DCS
		 : c >= 0x20 && c <= 0x2f ? S_ESC_INT : S_GROUND;
	return f->state == S_GROUND ? judge(f, out, o) : o;
}

static size_t step_esc_int(struct ttyfilter *f, unsigned char c, char *out, size_t o, bool *again)
{
	if (full(f)) {
		*again = true;
		return overflow(f, out, o);
	}
	if (c0_inside(c))
		return c0_pass(c, out, o);
	if (c >= 0x20 && c <= 0x2f)
		return hold(f, (char)c, out, o);
	if (c >= 0x30 && c <= 0x7e)
		return judge(f, out, hold(f, (char)c, out, o));
	*again = true;
	return abandon(f, out, o);
}

static size_t step_csi(struct ttyfilter *f, unsigned char c, char *out, size_t o, bool *again)
{
	if (full(f)) {
		*again = true;
		return overflow(f, out, o);
	}
	if (c >= 0x20 && c <= 0x3f)
		return hold(f, (char)c, out, o);
	if (c >= 0x40 && c <= 0x7e)
		return judge(f, out, hold(f, (char)c, out, o));
	if (c0_inside(c))
		return c0_pass(c, out, o); /* executed, the CSI goes on */
	if (c >= 0x7f)
		return o; /* ignored by terminals (or the CSI's end): not passed */
	*again = true; /* the control (or ESC) is read afresh */
	return abandon(f, out, o);
}

/* An OSC or DCS string being held. */
static size_t step_string(struct ttyfilter *f, unsigned char c, char *out, size_t o, bool *again)
{
	if (full(f)) {
		*again = true;
		return overflow(f, out, o);
	}
	if (c == CAN || c == SUB) {
		o = abandon(f, out, o);
		out[o++] = (char)c;
		return o;
	}
	if (c == ESC) {
		f->state = f->state == S_OSC ? S_OSC_ESC : S_DCS_ESC;
		return hold(f, (char)c, out, o);
	}
	if (c == BEL && f->state == S_OSC)
		return judge(f, out, hold(f, (char)c, out, o));
	return hold(f, (char)c, out, o);
}

/* After an ESC inside a held string: ST if '\' follows. */
static size_t step_string_esc(struct ttyfilter *f, unsigned char c, char *out, size_t o,
			      bool *again)
{
	if (c == '\\')
		return judge(f, out, hold(f, (char)c, out, o));
	/* not ST: the string ended at that ESC, which starts another */
	f->nheld--;
	o = abandon(f, out, o);
	f->held[0] = ESC;
	f->nheld = 1;
	f->state = S_ESC;
	*again = true;
	return o;
}

/* A long string on its way (a title, passed, or dropped). */
static size_t step_long(struct ttyfilter *f, unsigned char c, char *out, size_t o)
{
	if (c == CAN || c == SUB) {
		out[o++] = (char)c;
		f->state = S_GROUND;
	} else if (c == BEL) {
		if (f->state != S_DROP)
			out[o++] = (char)c;
		f->state = S_GROUND;
	} else if (c == ESC) {
		f->state = f->state == S_TITLE ? S_TITLE_ESC
			 : f->state == S_PASS ? S_PASS_ESC : S_DROP_ESC;
	} else if (f->state == S_PASS || (f->state == S_TITLE && printable(c))) {
		out[o++] = (char)c;
	}
	return o;
}

static size_t step_long_esc(struct ttyfilter *f, unsigned char c, char *out, size_t o,
			    bool *again)
{
	if (c == '\\') {
		if (f->state != S_DROP_ESC) {
			out[o++] = ESC;
			out[o++] = '\\';
		}
		f->state = S_GROUND;
		return o;
	}
	/* the sequence ended at that ESC, which starts another */
	f->held[0] = ESC;
	f->nheld = 1;
	f->state = S_ESC;
	*again = true;
	return o;
}

/* A CSI being dropped (overflowed), up to its final byte. */
static size_t step_drop_csi(struct ttyfilter *f, unsigned char c, size_t o, bool *again)
{
	if (c >= 0x40 && c <= 0x7e) {
		f->state = S_GROUND;
	} else if (c < 0x20 || c > 0x3f) {
		f->state = S_GROUND;
		*again = true;
	}
	return o;
}

static size_t step(struct ttyfilter *f, unsigned char c, char *out, size_t o, bool *again)
{
	switch (f->state) {
	case S_GROUND:
		return step_ground(f, c, out, o);
	case S_ESC:
		return step_esc(f, c, out, o, again);
	case S_ESC_INT:
		return step_esc_int(f, c, out, o, again);
	case S_CSI:
		return step_csi(f, c, out, o, again);
	case S_OSC:
	case S_DCS:
		return step_string(f, c, out, o, again);
	case S_OSC_ESC:
	case S_DCS_ESC:
		return step_string_esc(f, c, out, o, again);
	case S_TITLE:
	case S_PASS:
	case S_DROP:
		return step_long(f, c, out, o);
	case S_TITLE_ESC:
	case S_PASS_ESC:
	case S_DROP_ESC:
		return step_long_esc(f, c, out, o, again);
	case S_DROP_CSI:
		return step_drop_csi(f, c, o, again);
	}
	return o;
}

size_t ttyfilter_run(struct ttyfilter *f, const char *in, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		bool again = false;
		o = step(f, (unsigned char)in[i], out, o, &again);
		if (again)
			i--;
	}
	return o;
}

size_t ttyfilter_flush(struct ttyfilter *f, char *out)
{
	/* judged as if it ended here; a cut-off CSI or escape is dropped; a
	 * long string already on its way is closed, so that the terminal does
	 * not take what comes next as more of it */
	size_t o = 0;
	if (f->state == S_OSC_ESC || f->state == S_DCS_ESC)
		f->nheld--; /* the ESC of an ST that never came: abandon ends it */
	if (f->nheld) {
		o = abandon(f, out, 0);
	} else if (f->state == S_TITLE || f->state == S_PASS || f->state == S_TITLE_ESC ||
		   f->state == S_PASS_ESC) {
		out[o++] = ESC;
		out[o++] = '\\';
	}
	f->nheld = 0;
	f->state = S_GROUND;
	return o;
}
