include
protect
mask
read-only
env pass
