/* hosttext.h - a host as warden writes it before ":PORT": an IPv6 literal
 * (a host with a ':', not already bracketed) in brackets, any other host as
 * it is. For the places that hold a host as text (an address inet_ntop
 * wrote, an event's field, a command's argument); net/ writes a parsed
 * struct net_host with net_host_text and net_host_port (net/rules.h). */
#pragma once
#include <stdio.h>
#include <string.h>

/* Room for any host name (253 bytes) or IPv6 literal with its zone, in
 * brackets; a longer string, which names no host, is cut there. */
#define HOST_TEXT_MAX 300

/* host, or "[host]" written into out; out or host. */
static inline const char *host_text(const char *host, char out[HOST_TEXT_MAX])
{
	if (!strchr(host, ':') || host[0] == '[')
		return host;
	snprintf(out, HOST_TEXT_MAX, "[%s]", host);
	return out;
}
