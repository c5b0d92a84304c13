include ../../../etc/passwd
