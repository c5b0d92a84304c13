exec deny sha256:1234
