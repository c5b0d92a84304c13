# warden built-in default profile (builtin:default).
# A user profile is layered on top of it: it can add directives, or
# remove these with unprotect, unmask and env unset.

# Workspace files that configure code run outside the sandbox (git hooks,
# shell start-up files, editor and agent settings): read-only inside.
protect .git/hooks
protect .git/config
protect .gitmodules
protect .warden
protect .bashrc
protect .bash_profile
protect .bash_login
protect .bash_logout
protect .profile
protect .zshrc
protect .zshenv
protect .zprofile
protect .zlogin
protect .vscode
protect .idea
protect .claude
protect .mcp.json
protect .envrc

# Secrets: masked (unreadable) at any depth of the workspace.
mask .env
mask .env.*
mask *.pem
mask *.key
mask *.p12
mask *.pfx
mask id_rsa*
mask id_ed25519*
mask id_ecdsa*
mask id_dsa*
mask .npmrc
mask .pypirc
mask .netrc
mask .git-credentials

# Environment: only these variables pass through; everything else is dropped.
env pass PATH
env pass LANG
env pass LANGUAGE
env pass LC_*
env pass TERM
env pass COLORTERM
env pass TZ
env pass NO_COLOR
