/* escape.h - strings that are not UTF-8 kept losslessly in events.
 *
 * JSON strings are UTF-8; a path, an argument or a working directory on
 * Linux is any bytes but NUL. A field whose value is not valid UTF-8 is
 * written escaped: each backslash doubled, each byte that is not part of a
 * valid UTF-8 sequence as \xHH (four characters). The event then lists the
 * field's name in "escaped" (an array at its end), which is the marker: only
 * listed fields are escaped, and all of a listed array's strings are. A
 * reader undoes it with utf8_unescape. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Whether s (len bytes) is valid UTF-8 (no overlongs, no surrogates, at most
 * U+10FFFF). */
bool utf8_valid(const char *s, size_t len);
/* The escaped form of s (malloc'd), whatever s is. */
char *utf8_escape(const char *s);
/* The bytes an escaped string stands for (malloc'd, NUL-terminated; *len
 * their count); NULL when s is not a well-formed escaped string. */
char *utf8_unescape(const char *s, size_t *len);

/* Set key in obj to s, escaped when s is not UTF-8 (key then appended to
 * *escaped, an array made when first needed); NULL writes null. */
void json_set_bytes(json_t *obj, const char *key, const char *s, json_t **escaped);
/* An array of the strings v[0..n): all escaped when any is not UTF-8
 * (*any set). */
json_t *json_bytes_array(char *const *v, size_t n, bool *any);
/* Set key in obj to that array of v[0..n) (key appended to *escaped when
 * escaped, as json_set_bytes). */
void json_set_bytes_array(json_t *obj, const char *key, char *const *v, size_t n,
			  json_t **escaped);

/* Reading back: whether obj lists key in its "escaped". */
bool json_is_escaped(json_t *obj, const char *key);
/* The bytes obj's string field key stands for (malloc'd), undone when obj
 * lists key in "escaped"; NULL when there is none, it is not a string, or
 * it is not a well-formed escaped string of bytes without NUL. */
char *json_get_bytes(json_t *obj, const char *key);
/* The same of the i-th string of obj's array field key. */
char *json_get_bytes_at(json_t *obj, const char *key, size_t i);
