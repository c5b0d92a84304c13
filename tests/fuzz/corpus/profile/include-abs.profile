include /dev/zero
include /proc/self/status
include /nonexistent
