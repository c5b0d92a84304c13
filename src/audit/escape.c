/* escape.c - strings that are not UTF-8 kept losslessly in events
 * (escape.h). */
#include "escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/shown.h"
#include "../common/util.h"

bool utf8_valid(const char *s, size_t len)
{
	return utf8_invalid_at((const unsigned char *)s, len) == len;
}

char *utf8_escape(const char *s)
{
	size_t len = strlen(s);
	const unsigned char *u = (const unsigned char *)s;
	char *out = xmalloc(4 * len + 1), *o = out;
	for (size_t i = 0; i < len;) {
		unsigned cp;
		size_t n = utf8_seq(u + i, len - i, &cp);
		if (n == 1 && u[i] == '\\') {
			*o++ = '\\';
			*o++ = '\\';
		} else if (n) {
			memcpy(o, u + i, n);
			o += n;
		} else {
			o += sprintf(o, "\\x%02X", u[i]);
			n = 1;
		}
		i += n;
	}
	*o = '\0';
	return out;
}

char *utf8_unescape(const char *s, size_t *len)
{
	size_t n = strlen(s);
	char *out = xmalloc(n + 1), *o = out;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\') {
			*o++ = s[i];
			continue;
		}
		if (s[i + 1] == '\\') {
			*o++ = '\\';
			i++;
		} else if (s[i + 1] == 'x' && hex_digit((unsigned char)s[i + 2]) >= 0 &&
			   hex_digit((unsigned char)s[i + 3]) >= 0) {
			*o++ = (char)(hex_digit((unsigned char)s[i + 2]) * 16 + hex_digit((unsigned char)s[i + 3]));
			i += 3;
		} else {
			free(out);
			return NULL;
		}
	}
	*o = '\0';
	if (len)
		*len = (size_t)(o - out);
	return out;
}

void json_set_bytes(json_t *obj, const char *key, const char *s, json_t **escaped)
{
	if (!obj)
		return;
	if (!s) {
		json_object_set_new(obj, key, json_null());
		return;
	}
	if (utf8_valid(s, strlen(s))) {
		json_object_set_new(obj, key, json_string(s));
		return;
	}
	char *e = utf8_escape(s);
	json_object_set_new(obj, key, json_string(e));
	free(e);
	if (!*escaped)
		*escaped = json_array();
	json_array_append_new(*escaped, json_string(key));
}

json_t *json_bytes_array(char *const *v, size_t n, bool *any)
{
	*any = false;
	for (size_t i = 0; i < n && !*any; i++)
		*any = !utf8_valid(v[i], strlen(v[i]));
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		if (!*any) {
			json_array_append_new(a, json_string(v[i]));
			continue;
		}
		char *e = utf8_escape(v[i]);
		json_array_append_new(a, json_string(e));
		free(e);
	}
	return a;
}

void json_set_bytes_array(json_t *obj, const char *key, char *const *v, size_t n,
			  json_t **escaped)
{
	bool any;
	json_object_set_new(obj, key, json_bytes_array(v, n, &any));
	if (!any)
		return;
	if (!*escaped)
		*escaped = json_array();
	json_array_append_new(*escaped, json_string(key));
}

bool json_is_escaped(json_t *obj, const char *key)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(obj, "escaped"), i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), key) == 0)
			return true;
	return false;
}

/* The bytes of v, a string of obj's field key. */
static char *bytes_of(json_t *obj, const char *key, json_t *v)
{
	const char *s = json_string_value(v);
	if (!s || strlen(s) != json_string_length(v))
		return NULL;
	if (!json_is_escaped(obj, key))
		return xstrdup(s);
	size_t n;
	char *u = utf8_unescape(s, &n);
	if (u && strlen(u) != n) { /* \x00: no path or argument holds a NUL */
		free(u);
		return NULL;
	}
	return u;
}

char *json_get_bytes(json_t *obj, const char *key)
{
	return bytes_of(obj, key, json_object_get(obj, key));
}

char *json_get_bytes_at(json_t *obj, const char *key, size_t i)
{
	return bytes_of(obj, key, json_array_get(json_object_get(obj, key), i));
}
