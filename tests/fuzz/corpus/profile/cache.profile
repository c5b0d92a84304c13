# caches kept for the workspace
cache ~/.cargo/registry
cache ~/.cargo/git/
cache ~/.cache/go-build
cache ~/go/pkg/mod
cache ~/.cargo/registry
