# warden profile, imported by `warden import codex` from:
#   codex-workspace.toml
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
# - sandbox_workspace_write.network_access = true: warden has no rule for the whole network; add `net allow HOST` for the hosts the work needs (warden's summary at exit names those it refused)

# ---- files
read-write /home/dev/.cache/uv           # sandbox_workspace_write.writable_roots
read-write ~/.cargo/registry             # sandbox_workspace_write.writable_roots

# ---- not mapped
# - approval_policy: Codex's own prompts, which still apply inside warden
# - shell_environment_policy: warden passes only PATH, LANG, TERM, TZ and a few more to the sandbox (`env pass NAME` adds one)
# - profiles: Codex picks these when it starts; import what you run with by putting it at the top level

# Not sandbox settings, not imported: model model_reasoning_effort mcp_servers
#   tui
