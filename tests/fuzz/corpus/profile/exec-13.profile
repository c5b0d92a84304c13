exec hash-limit unlimited 1
