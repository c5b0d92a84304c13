# warden profile, imported by `warden import srt` from:
#   srt-full.json
# Layered on warden's built-in default profile. Check it with
# `warden policy show --profile FILE`, use it with
# `warden run --profile FILE -- COMMAND`.
#
# Stricter in warden than in these settings, whatever they say:
# - the sandbox holds every process of the session, the agent's own included
# - reads: only the system directories, a curated /etc, the workspace and
#   the paths below; the home inside is empty
# - writes: only the workspace, a private /tmp and the read-write paths
#   below, which are mounted noexec
# - network: only the hosts allowed below (and an agent's own API host);
#   no DNS inside; names that resolve to private addresses are refused
# - environment: only PATH, LANG, TERM, TZ and a few more variables pass
# - in the workspace, .env, *.pem, *.key, id_rsa* and other secrets are
#   unreadable, .git/hooks, .claude, .codex and other settings read-only

# ---- network
net deny malicious.com                   # network.deniedDomains
net deny gist.github.com                 # network.deniedDomains
net allow github.com                     # network.allowedDomains
net allow *.github.com                   # network.allowedDomains
net allow lfs.github.com                 # network.allowedDomains
net allow api.github.com                 # network.allowedDomains
net allow npmjs.org                      # network.allowedDomains
net allow *.npmjs.org                    # network.allowedDomains
net allow registry.yarnpkg.com:443       # network.allowedDomains

# ---- files
# filesystem.denyRead "~/.ssh": unreadable already: warden shows nothing there
# filesystem.denyRead "~/.aws/credentials": unreadable already: warden shows nothing there
mask secrets                             # filesystem.denyRead  (a name: at any depth)
mask build                               # filesystem.denyRead  (a name: at any depth)
# filesystem.denyRead "/etc/ssl/private": unreadable already: warden's curated /etc does not hold it
# filesystem.denyRead "/usr/local/etc/company.conf": NOT MAPPED: warden shows the system directories and a curated /etc read-only and cannot hide a path in them
protect .env                             # filesystem.denyWrite  (a name: at any depth)
protect config/production.json           # filesystem.denyWrite
mask *.lock                              # filesystem.denyWrite  (unreadable too)  (a name: at any depth)
# filesystem.allowWrite ".": writable already: in the workspace
# filesystem.allowWrite "src/": writable already: in the workspace
# filesystem.allowWrite "test/": writable already: in the workspace
# filesystem.allowWrite "/tmp": writable already, in a private tmpfs (the host's is not shared)
read-write ~/.cache/pip                  # filesystem.allowWrite
# filesystem.allowWrite "~/.ssh/known_hosts": left out, it would show ~/.ssh, which is denied

# ---- not mapped
# - LESS STRICT: filesystem.denyRead "/usr/local/etc/company.conf": in a system directory, which warden shows read-only
# - network.allowUnixSockets: the host's Unix sockets are not in warden's sandbox, but for those in a path a profile binds
# - ignoreViolations: warden records every refusal in the audit log
# - filesystem.allowWrite "~/.ssh/known_hosts": would show the denied ~/.ssh; left out
