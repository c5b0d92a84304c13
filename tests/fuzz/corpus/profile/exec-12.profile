exec hash-limit 64M 0.5
