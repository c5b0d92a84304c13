mask a
mask b
