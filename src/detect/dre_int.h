/* dre_int.h - inside the detection rules' regular expressions (dre.h): the
 * program dre.c compiles a pattern to and dre_run.c runs. A program is an
 * array of states: OP_SET reads a byte of the set and goes on to the next
 * state, OP_ASSERT goes on when the position passes the test, OP_SPLIT goes
 * on to both x and y, OP_JMP to x, OP_MATCH ends a match. */
#pragma once
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum assertion { AS_BOL, AS_EOL, AS_WORDB, AS_NWORDB, AS_WBEG, AS_WEND };
enum op { OP_SET, OP_ASSERT, OP_SPLIT, OP_JMP, OP_MATCH };

struct inst {
	uint8_t op;
	uint8_t as;              /* OP_ASSERT: the test */
	uint32_t set;            /* OP_SET: its index in sets */
	uint32_t x, y;           /* OP_SPLIT: both; OP_JMP: x */
};

struct dfa;

struct dre {
	struct inst *prog;
	size_t n;
	uint8_t (*sets)[32];     /* 256 bits each */
	bool wordy;              /* a \b \B \< or \>: run without the cache */
	/* dre_run.c's: the scratch of a match (two sparse sets of states and a
	 * stack) and the cache of sets of states met (made at the first match) */
	uint32_t *dense[2], *sparse[2], *stack;
	uint64_t *bits;          /* a bit per state, all 0 between uses */
	struct dfa *dfa;
};

static inline bool dre_is_word(int c) { return c == '_' || isalnum(c); }

/* dre_run.c: a compiled program's scratch space, made and released. */
void dre_run_init(struct dre *re);
void dre_run_free(struct dre *re);
