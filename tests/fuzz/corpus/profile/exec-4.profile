exec deny /etc/hostname
