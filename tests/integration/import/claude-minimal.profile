# warden profile, imported by `warden import claude` from:
#   claude-minimal.json
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
# - Claude Code's own sandbox is not set up in these settings: warden's holds for the whole agent, not only its shell commands

# ---- files
mask *.pem                               # permissions.deny "Read(**/*.pem)"  (a name: at any depth)

# ---- tool calls (the agent's hook; Claude Code's order: deny, ask, allow)
tool deny Bash *sudo*                    # permissions.deny "Bash(sudo:*)"  (anywhere in the command: matches more)
tool deny Read */*.pem                   # permissions.deny "Read(**/*.pem)"
tool allow Bash ls                       # permissions.allow "Bash(ls:*)"
tool allow Bash ls *                     # permissions.allow "Bash(ls:*)"
tool allow Bash cat                      # permissions.allow "Bash(cat:*)"
tool allow Bash cat *                    # permissions.allow "Bash(cat:*)"
# (allow rules decide only under `tool default deny|ask`; a pattern
# matches the whole command, which Claude Code's rules split at ; && |)
