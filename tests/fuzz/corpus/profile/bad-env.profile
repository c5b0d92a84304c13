env pass 1BAD
env set NOEQ
env set A*=1
env
env frob
