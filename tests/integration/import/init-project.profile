# warden profile for the project myproject, written by `warden init`.
# Use it: warden run --profile warden.profile -- COMMAND
# Check it: warden policy show --profile warden.profile
# It is layered on warden's built-in default profile: the workspace is
# writable, the home inside is empty, secrets in the workspace are
# unreadable, and there is no network but what `net allow` lines allow.

# The agent must not widen its own next session: read-only inside.
protect warden.profile

# ---- Node (npm, pnpm): package.json
net allow registry.npmjs.org
# Its downloads kept for this workspace's next sessions, in warden's
# own directory, never your home's, and not in a --review session
# (warden-profile(5)). Without them the home inside is a fresh tmpfs
# each session.
cache ~/.npm
cache ~/.local/share/pnpm/store
# Or share its cache in your home with the sandbox (your own
# builds' downloads too); but what the agent writes there runs
# later outside the sandbox. Uncomment both lines of one: the path
# is bound at the same path inside, and the variable points the
# tool at it.
#read-write ~/.npm
#env set npm_config_cache=/HOME/.npm
#read-write ~/.local/share/pnpm/store
#env set npm_config_store_dir=/HOME/.local/share/pnpm/store

# ---- Python (pip, uv, Poetry): pyproject.toml
net allow pypi.org
net allow files.pythonhosted.org
# Its downloads kept (see above):
cache ~/.cache/pip
cache ~/.cache/uv
cache ~/.cache/pypoetry
# Its cache (shared, see above):
#read-write ~/.cache/pip
#env set PIP_CACHE_DIR=/HOME/.cache/pip
#read-write ~/.cache/uv
#env set UV_CACHE_DIR=/HOME/.cache/uv
#read-write ~/.cache/pypoetry
#env set POETRY_CACHE_DIR=/HOME/.cache/pypoetry

# ---- Rust (cargo): Cargo.toml
net allow crates.io
net allow static.crates.io
net allow index.crates.io
# Its downloads kept (see above):
cache ~/.cargo/registry
cache ~/.cargo/git
# Its cache in your home is not offered: cargo keeps its cache in CARGO_HOME, beside its credentials.

# ---- Go (modules): go.mod
net allow proxy.golang.org
net allow sum.golang.org
# Its downloads kept (see above):
cache ~/go/pkg/mod
cache ~/.cache/go-build
# Its cache (shared, see above):
#read-write ~/go/pkg/mod
#env set GOMODCACHE=/HOME/go/pkg/mod
#read-write ~/.cache/go-build
#env set GOCACHE=/HOME/.cache/go-build

# ---- git remotes: not allowed, since an allowed host receives what the
# agent sends (a push); uncomment to fetch and push from the sandbox
#net allow github.com
#net allow gitlab.example.com
