# warden profile, imported by `warden import codex` from:
#   codex-readonly.toml
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

# ---- not mapped
# - LESS STRICT: sandbox_mode "read-only": warden lets the workspace be written as a whole; `warden run --review` keeps every write for your review before it reaches the workspace

# Not sandbox settings, not imported: model instructions
