read-write /usr
read-only /
read-only /proc/self/root
read-write /dev/shm
