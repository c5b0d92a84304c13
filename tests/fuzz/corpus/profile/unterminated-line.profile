mask a
protect b
env set X=no newline at end