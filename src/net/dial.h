/* dial.h - whether the proxy may dial a resolved address: the address's
 * class (addr.h) and this host's own addresses, weighed against the rule
 * that allowed the name and the deny rules naming addresses (rules.h).
 * The decision point for an address, as rules_match() is for a name. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "addr.h"
#include "rules.h"

/* May the proxy dial `ip` port `port`, for a name that rule `allowed_by`
 * (from rules_match) allowed? Refused, in this order:
 *  - a deny rule of `set` naming this address (any port or this port);
 *  - unspecified, multicast, broadcast: always;
 *  - unless `allowed_by` is an IP rule naming this very address: loopback,
 *    link-local, cloud metadata, reserved, an address of this host (from
 *    `local`; NULL reads the interfaces now), and private ranges unless
 *    `allowed_by` has allow_private.
 * set and allowed_by may be NULL. Returns true when the address may be
 * dialed; otherwise false with *reason (static, short, ASCII) set, e.g.
 * "resolves to loopback". */
bool dial_allowed(const struct net_rules *set, const struct net_rule *allowed_by,
		  const struct addr_ip *ip, uint16_t port, const struct addr_local *local,
		  const char **reason);
