# every directive once
include default
read-only /opt/data/
read-write ~/cache
read-only ~
read-write /srv/x	# comment
read-only /srv/x
protect build/out/
unprotect .envrc
mask *.sqlite
mask a#b
unmask *.pem
env pass MY_*
env set FOO=bar baz # trailing
env set EMPTY=
env set EQ=a=b=c
env unset TZ
canary off
git-identity off
