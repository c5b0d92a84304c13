read-only /a/../b
protect ../x
mask a/../b
read-write ~/../../etc
