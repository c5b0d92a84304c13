/* dial.c - the dial decision for a resolved address: deny rules naming it,
 * its class, this host's own addresses, and what the rule that allowed the
 * name opens (an IP rule naming the address, `private`). */
#include "dial.h"

bool dial_allowed(const struct net_rules *set, const struct net_rule *allowed_by,
		  const struct addr_ip *ip, uint16_t port, const struct addr_local *local,
		  const char **reason)
{
	const char *dummy;
	if (!reason)
		reason = &dummy;
	if (set && rules_deny_addr(set, ip, port)) {
		*reason = "resolves to a denied address";
		return false;
	}
	enum addr_class cls = addr_classify(ip);
	switch (cls) {
	case ADDR_UNSPECIFIED:
		*reason = "resolves to an unspecified address";
		return false;
	case ADDR_MULTICAST:
		*reason = "resolves to a multicast address";
		return false;
	case ADDR_BROADCAST:
		*reason = "resolves to the broadcast address";
		return false;
	default:
		break;
	}
	bool named = allowed_by && allowed_by->kind == NET_RULE_IP &&
		     addr_ip_equal(&allowed_by->ip, ip) &&
		     (allowed_by->port == 0 || allowed_by->port == port);
	if (named)
		return true;
	switch (cls) {
	case ADDR_LOOPBACK:
		*reason = "resolves to loopback";
		return false;
	case ADDR_LINK_LOCAL:
		*reason = "resolves to a link-local address";
		return false;
	case ADDR_METADATA:
		*reason = "resolves to a cloud metadata endpoint";
		return false;
	case ADDR_RESERVED:
		*reason = "resolves to a reserved address";
		return false;
	case ADDR_PRIVATE:
		if (!allowed_by || !allowed_by->allow_private) {
			*reason = "resolves to a private address";
			return false;
		}
		break;
	default:
		break;
	}
	bool is_local;
	if (local) {
		is_local = addr_local_has(local, ip);
	} else {
		struct addr_local now;
		if (addr_local_load(&now, NULL) < 0) {
			*reason = "cannot read this host's addresses";
			return false;
		}
		is_local = addr_local_has(&now, ip);
		addr_local_free(&now);
	}
	if (is_local) {
		*reason = "resolves to an address of this host";
		return false;
	}
	return true;
}
