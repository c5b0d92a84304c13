/* addr.h - what kind of address a resolved destination is (loopback, private,
 * cloud metadata, one of this host's own ...); whether the proxy may dial it
 * is dial.h's. Pure except for addr_local_load() and addr_is_local_host(),
 * which read this host's interfaces (getifaddrs).
 *
 * Every address is handled in one canonical 16-byte form: IPv6, with IPv4 as
 * ::ffff:a.b.c.d. IPv4-mapped (::ffff:0:0/96) and IPv4-compatible (::/96,
 * except :: and ::1) IPv6 addresses are the same IPv4 address to every
 * function here; NAT64 (64:ff9b::/96) is classified by the IPv4 it embeds. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "../common/err.h"

struct addr_ip {
	uint8_t b[16]; /* network order; IPv4 as ::ffff:a.b.c.d */
};

enum addr_class {
	ADDR_PUBLIC = 0,   /* may be dialed when a rule allows the name */
	ADDR_UNSPECIFIED,  /* 0.0.0.0/8, :: */
	ADDR_LOOPBACK,     /* 127/8, ::1 */
	ADDR_LINK_LOCAL,   /* 169.254/16, fe80::/10 */
	ADDR_MULTICAST,    /* 224/4, ff00::/8 */
	ADDR_BROADCAST,    /* 255.255.255.255 */
	ADDR_METADATA,     /* cloud instance metadata endpoints */
	ADDR_PRIVATE,      /* 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, fec0::/10, 64:ff9b:1::/48 */
	ADDR_RESERVED,     /* documentation, benchmarking, 240/4, IETF, non-global IPv6 */
};

/* Short name of a class ("loopback", "cloud metadata" ...), for reasons. */
const char *addr_class_name(enum addr_class c);

/* The canonical form of an IPv4 (4 bytes) or IPv6 (16 bytes) address. */
void addr_ip_from_v4(struct addr_ip *ip, const uint8_t v4[4]);
void addr_ip_from_v6(struct addr_ip *ip, const uint8_t v6[16]);

/* From a sockaddr_in / sockaddr_in6; -1 for other families or short lengths.
 * port (may be NULL) receives the port in host order. */
int addr_ip_from_sockaddr(struct addr_ip *ip, uint16_t *port, const struct sockaddr *sa,
			  socklen_t len);

/* The inverse: ip and port (host order) as a sockaddr_in for an IPv4 (or
 * IPv4-mapped) address, else a sockaddr_in6; returns its length. */
socklen_t addr_ip_to_sockaddr(const struct addr_ip *ip, uint16_t port,
			      struct sockaddr_storage *ss);

/* true when the address is IPv4 (after mapping); v4 (may be NULL) gets it. */
bool addr_ip_is_v4(const struct addr_ip *ip, uint8_t v4[4]);

bool addr_ip_equal(const struct addr_ip *a, const struct addr_ip *b);

/* "a.b.c.d" or the compressed lower-case IPv6 text (no brackets).
 * out must hold ADDR_TEXT_MAX bytes. */
#define ADDR_TEXT_MAX 46
const char *addr_ip_text(const struct addr_ip *ip, char out[ADDR_TEXT_MAX]);

enum addr_class addr_classify(const struct addr_ip *ip);

/* This host's own addresses (every interface, up or not), as a snapshot. */
struct addr_local {
	struct addr_ip *ips;
	size_t n;
};
int addr_local_load(struct addr_local *l, struct werr *e);
bool addr_local_has(const struct addr_local *l, const struct addr_ip *ip);
void addr_local_free(struct addr_local *l);

/* Reads the interfaces now (getifaddrs); false when that fails. */
bool addr_is_local_host(const struct addr_ip *ip);
