exec deny /proc/kcore
