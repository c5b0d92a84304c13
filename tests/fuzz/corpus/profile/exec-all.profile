exec hash-limit 64M 0.5
exec allow /usr
exec allow sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
exec default deny
exec strict
exec allow-writable target
exec allow-writable ~/.local/bin
exec deny /etc/hostname
