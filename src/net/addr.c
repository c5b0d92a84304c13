/* addr.c - classification of resolved addresses (loopback, private, cloud
 * metadata ...) and this host's own addresses. A leaf: the decision that
 * weighs them against the rules is dial.c's. */
#include "addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

static const uint8_t v4mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

const char *addr_class_name(enum addr_class c)
{
	switch (c) {
	case ADDR_PUBLIC: return "public";
	case ADDR_UNSPECIFIED: return "unspecified";
	case ADDR_LOOPBACK: return "loopback";
	case ADDR_LINK_LOCAL: return "link-local";
	case ADDR_MULTICAST: return "multicast";
	case ADDR_BROADCAST: return "broadcast";
	case ADDR_METADATA: return "cloud metadata";
	case ADDR_PRIVATE: return "private";
	case ADDR_RESERVED: return "reserved";
	}
	return "unknown";
}

void addr_ip_from_v4(struct addr_ip *ip, const uint8_t v4[4])
{
	memcpy(ip->b, v4mapped_prefix, 12);
	memcpy(ip->b + 12, v4, 4);
}

/* ::a.b.c.d (IPv4-compatible, deprecated) except :: and ::1 becomes the IPv4
 * address, as does ::ffff:a.b.c.d (kept as is: it is the canonical form). */
void addr_ip_from_v6(struct addr_ip *ip, const uint8_t v6[16])
{
	static const uint8_t zero12[12];
	memcpy(ip->b, v6, 16);
	if (memcmp(v6, zero12, 12) == 0) {
		uint32_t low = (uint32_t)v6[12] << 24 | (uint32_t)v6[13] << 16 |
			       (uint32_t)v6[14] << 8 | v6[15];
		if (low > 1)
			addr_ip_from_v4(ip, v6 + 12);
	}
}

int addr_ip_from_sockaddr(struct addr_ip *ip, uint16_t *port, const struct sockaddr *sa,
			  socklen_t len)
{
	if (!sa)
		return -1;
	if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		addr_ip_from_v4(ip, (const uint8_t *)&in->sin_addr);
		if (port)
			*port = ntohs(in->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		addr_ip_from_v6(ip, in6->sin6_addr.s6_addr);
		if (port)
			*port = ntohs(in6->sin6_port);
		return 0;
	}
	return -1;
}

socklen_t addr_ip_to_sockaddr(const struct addr_ip *ip, uint16_t port,
			      struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	uint8_t v4[4];
	if (addr_ip_is_v4(ip, v4)) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, v4, 4);
		return sizeof *in;
	}
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	memcpy(&in6->sin6_addr, ip->b, 16);
	return sizeof *in6;
}

bool addr_ip_is_v4(const struct addr_ip *ip, uint8_t v4[4])
{
	if (memcmp(ip->b, v4mapped_prefix, 12) != 0)
		return false;
	if (v4)
		memcpy(v4, ip->b + 12, 4);
	return true;
}

bool addr_ip_equal(const struct addr_ip *a, const struct addr_ip *b)
{
	return memcmp(a->b, b->b, 16) == 0;
}

const char *addr_ip_text(const struct addr_ip *ip, char out[ADDR_TEXT_MAX])
{
	uint8_t v4[4];
	if (addr_ip_is_v4(ip, v4))
		snprintf(out, ADDR_TEXT_MAX, "%u.%u.%u.%u", v4[0], v4[1], v4[2], v4[3]);
	else if (!inet_ntop(AF_INET6, ip->b, out, ADDR_TEXT_MAX))
		snprintf(out, ADDR_TEXT_MAX, "?");
	return out;
}

/* A prefix of `bits` bits of a 4- or 16-byte address. */
struct prefix {
	uint8_t b[16];
	unsigned bits;
	enum addr_class cls;
};

static bool prefix_has(const uint8_t *a, const struct prefix *p)
{
	unsigned full = p->bits / 8, rest = p->bits % 8;
	if (memcmp(a, p->b, full) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[full] & mask) == (p->b[full] & mask);
}

/* Most specific first: the first matching prefix decides. */
static const struct prefix v4_table[] = {
	{ { 169, 254, 169, 254 }, 32, ADDR_METADATA },  /* AWS, GCP, Azure, OpenStack ... */
	{ { 169, 254, 170, 2 }, 32, ADDR_METADATA },    /* AWS ECS task metadata */
	{ { 169, 254, 170, 23 }, 32, ADDR_METADATA },   /* AWS EKS pod identity */
	{ { 169, 254, 0, 23 }, 32, ADDR_METADATA },     /* Tencent Cloud */
	{ { 100, 100, 100, 200 }, 32, ADDR_METADATA },  /* Alibaba Cloud */
	{ { 168, 63, 129, 16 }, 32, ADDR_METADATA },    /* Azure wire server */
	{ { 255, 255, 255, 255 }, 32, ADDR_BROADCAST },
	{ { 0 }, 8, ADDR_UNSPECIFIED },                 /* "this network"; 0.0.0.0 dials loopback */
	{ { 127 }, 8, ADDR_LOOPBACK },
	{ { 169, 254 }, 16, ADDR_LINK_LOCAL },
	{ { 224 }, 4, ADDR_MULTICAST },
	{ { 240 }, 4, ADDR_RESERVED },
	{ { 10 }, 8, ADDR_PRIVATE },
	{ { 172, 16 }, 12, ADDR_PRIVATE },
	{ { 192, 168 }, 16, ADDR_PRIVATE },
	{ { 100, 64 }, 10, ADDR_PRIVATE },              /* carrier-grade NAT */
	{ { 192, 0, 0 }, 24, ADDR_RESERVED },           /* IETF protocol assignments */
	{ { 192, 0, 2 }, 24, ADDR_RESERVED },           /* TEST-NET-1 */
	{ { 198, 51, 100 }, 24, ADDR_RESERVED },        /* TEST-NET-2 */
	{ { 203, 0, 113 }, 24, ADDR_RESERVED },         /* TEST-NET-3 */
	{ { 198, 18 }, 15, ADDR_RESERVED },             /* benchmarking */
	{ { 192, 88, 99 }, 24, ADDR_RESERVED },         /* 6to4 relay anycast (deprecated) */
};

static const struct prefix v6_table[] = {
	{ { 0xfd, 0x00, 0x0e, 0xc2, [15] = 0x54, [14] = 0x02 }, 128, ADDR_METADATA }, /* fd00:ec2::254 */
	{ { 0xfd, 0x00, 0x0e, 0xc2, [15] = 0x23 }, 128, ADDR_METADATA },             /* fd00:ec2::23 */
	{ { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, 48, ADDR_PRIVATE },  /* local-use NAT64 */
	{ { 0x01, 0x00, [7] = 0 }, 64, ADDR_RESERVED },                /* 100::/64 discard-only */
	{ { 0x20, 0x01, 0x0d, 0xb8 }, 32, ADDR_RESERVED },             /* documentation */
	{ { 0x3f, 0xff }, 20, ADDR_RESERVED },                         /* documentation (3fff::/20) */
	{ { 0x20, 0x01, 0x00 }, 23, ADDR_RESERVED },  /* IETF protocol assignments: Teredo, ORCHID, benchmarking ... */
	{ { 0x20, 0x02 }, 16, ADDR_RESERVED },                         /* 6to4 (deprecated) */
	{ { 0xfe, 0x80 }, 10, ADDR_LINK_LOCAL },
	{ { 0xfe, 0xc0 }, 10, ADDR_PRIVATE },                          /* site-local (deprecated) */
	{ { 0xfc }, 7, ADDR_PRIVATE },                                 /* unique local */
	{ { 0xff }, 8, ADDR_MULTICAST },
	{ { 0x20 }, 3, ADDR_PUBLIC },                                  /* global unicast */
};

static enum addr_class classify_v4(const uint8_t v4[4])
{
	for (size_t i = 0; i < ARRAY_LEN(v4_table); i++)
		if (prefix_has(v4, &v4_table[i]))
			return v4_table[i].cls;
	return ADDR_PUBLIC;
}

enum addr_class addr_classify(const struct addr_ip *ip)
{
	static const uint8_t zero[16];
	static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
	uint8_t v4[4];

	if (memcmp(ip->b, zero, 16) == 0)
		return ADDR_UNSPECIFIED;
	if (memcmp(ip->b, zero, 15) == 0 && ip->b[15] == 1)
		return ADDR_LOOPBACK;
	if (addr_ip_is_v4(ip, v4))
		return classify_v4(v4);
	/* A non-canonical ::a.b.c.d (an addr_ip built by hand) is its IPv4. */
	if (memcmp(ip->b, zero, 12) == 0)
		return classify_v4(ip->b + 12);
	/* NAT64 well-known prefix: a translator dials the embedded IPv4. */
	if (memcmp(ip->b, nat64, 12) == 0)
		return classify_v4(ip->b + 12);
	for (size_t i = 0; i < ARRAY_LEN(v6_table); i++)
		if (prefix_has(ip->b, &v6_table[i]))
			return v6_table[i].cls;
	return ADDR_RESERVED; /* outside 2000::/3: not a global unicast address */
}

int addr_local_load(struct addr_local *l, struct werr *e)
{
	l->ips = NULL;
	l->n = 0;
	struct ifaddrs *ifa;
	if (getifaddrs(&ifa) < 0)
		return werr_errno(e, "reading this host's addresses (getifaddrs)");
	size_t cap = 0;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		struct addr_ip ip;
		if (!i->ifa_addr)
			continue;
		socklen_t len = i->ifa_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
								    : sizeof(struct sockaddr_in);
		if (addr_ip_from_sockaddr(&ip, NULL, i->ifa_addr, len) < 0)
			continue;
		if (addr_local_has(l, &ip))
			continue;
		if (l->n == cap) {
			cap = cap ? cap * 2 : 16;
			l->ips = xrealloc(l->ips, cap * sizeof *l->ips);
		}
		l->ips[l->n++] = ip;
	}
	freeifaddrs(ifa);
	return 0;
}

bool addr_local_has(const struct addr_local *l, const struct addr_ip *ip)
{
	for (size_t i = 0; i < l->n; i++)
		if (addr_ip_equal(&l->ips[i], ip))
			return true;
	return false;
}

void addr_local_free(struct addr_local *l)
{
	free(l->ips);
	l->ips = NULL;
	l->n = 0;
}

bool addr_is_local_host(const struct addr_ip *ip)
{
	struct addr_local l;
	if (addr_local_load(&l, NULL) < 0)
		return false;
	bool has = addr_local_has(&l, ip);
	addr_local_free(&l);
	return has;
}
