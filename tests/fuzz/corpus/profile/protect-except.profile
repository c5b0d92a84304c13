# a directory kept writable inside a protected one
protect .claude
protect !.claude/worktrees
unprotect !a/b
