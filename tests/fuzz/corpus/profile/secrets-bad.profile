secret
secret 1A host a.test
secret KEY hosts a.test
secret KEY host
secret KEY host file /k
secret KEY host a.test file
secret KEY host a.test file /a /b
secret KEY host a.test file rel
secret KEY host a.test command
secret KEY host *.co.uk
secret KEY host *.github.io
secret KEY host *
secret KEY host a.test
env pass KEY
env set KEY=1
