# warden profile, imported by `warden import claude` from:
#   claude-team.json
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
# - sandbox.excludedCommands ["docker","git"]: nothing runs outside warden's sandbox; these commands run inside it too

# ---- network
net deny pastebin.com                    # permissions.deny "WebFetch(domain:pastebin.com)"
net allow registry.npmjs.org             # sandbox.network.allowedDomains
net allow *.githubusercontent.com        # sandbox.network.allowedDomains
net allow docs.python.org                # permissions.allow "WebFetch(domain:docs.python.org)"

# ---- files
# sandbox.filesystem.denyRead "~/.gnupg": unreadable already: warden shows nothing there
mask .env                                # permissions.deny "Read(./.env)"  (a name: at any depth)
mask .env.*                              # permissions.deny "Read(./.env.*)"  (a name: at any depth)
mask secrets                             # permissions.deny "Read(./secrets/**)"  (a name: at any depth)
# permissions.deny "Read(~/.aws/**)" "~/.aws/**": unreadable already: warden shows nothing there
# sandbox.filesystem.denyWrite "~/.kube/config.d": not writable already: warden shows nothing there
# permissions.deny "Edit(//etc/**)" "//etc/**": read-only already (a system directory)
# permissions.additionalDirectories "../docs/": not mapped ('..' components are not mapped)
read-only ~/.kube                        # sandbox.filesystem.allowWrite  (read-only: ~/.kube/config.d is denied writing)
# sandbox.filesystem.allowWrite "//tmp/build": writable already, in a private tmpfs (the host's is not shared)
# permissions.allow "Edit(src/**)" "src/**": writable already: in the workspace

# ---- tool calls (the agent's hook; Claude Code's order: deny, ask, allow)
tool deny Bash *curl*                    # permissions.deny "Bash(curl:*)"  (anywhere in the command: matches more)
tool deny Bash *rm -rf*                  # permissions.deny "Bash(rm -rf:*)"  (anywhere in the command: matches more)
tool deny Read */.env                    # permissions.deny "Read(./.env)"
tool deny Read */.env.*                  # permissions.deny "Read(./.env.*)"
tool deny Read */secrets/*               # permissions.deny "Read(./secrets/**)"
tool deny Read */.aws/*                  # permissions.deny "Read(~/.aws/**)"
tool deny Edit /etc/*                    # permissions.deny "Edit(//etc/**)"
tool deny WebFetch *://pastebin.com*     # permissions.deny "WebFetch(domain:pastebin.com)"
tool deny Task                           # permissions.deny "Task(Explore)"  (every call of the tool: warden cannot match the specifier)
tool ask Bash *git push*                 # permissions.ask "Bash(git push:*)"  (anywhere in the command: matches more)
tool ask WebFetch                        # permissions.ask "WebFetch"
tool allow Bash npm run lint             # permissions.allow "Bash(npm run lint)"
tool allow Bash npm run test             # permissions.allow "Bash(npm run test:*)"
tool allow Bash npm run test *           # permissions.allow "Bash(npm run test:*)"
tool allow Bash git diff                 # permissions.allow "Bash(git diff:*)"
tool allow Bash git diff *               # permissions.allow "Bash(git diff:*)"
tool allow Read */.zshrc                 # permissions.allow "Read(~/.zshrc)"
tool allow Edit */src/*                  # permissions.allow "Edit(src/**)"
tool allow WebFetch *://docs.python.org  # permissions.allow "WebFetch(domain:docs.python.org)"
tool allow WebFetch *://docs.python.org/* # permissions.allow "WebFetch(domain:docs.python.org)"
tool allow mcp__github__*                # permissions.allow "mcp__github"
# (allow rules decide only under `tool default deny|ask`; a pattern
# matches the whole command, which Claude Code's rules split at ; && |)

# ---- not mapped
# - permissions.defaultMode "acceptEdits": Claude Code's own prompts, which still apply inside warden
# - sandbox.autoAllowBashIfSandboxed: Claude Code's own prompts; warden's tool rules below only tighten them
# - sandbox.network.allowUnixSockets: the host's Unix sockets are not in warden's sandbox, but for those in a path a profile binds
# - sandbox.network.allowLocalBinding: binding ports works on the sandbox's own loopback; the host's loopback is reached only by a `net allow 127.0.0.1:PORT` rule
# - permissions.additionalDirectories "../docs/": '..' components are not mapped; left out

# Not sandbox settings, not imported: model env hooks includeCoAuthoredBy
