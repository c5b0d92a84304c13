env pass GH_TOKEN
env set API_KEY=x
secret GH_TOKEN host github.com *.github.com api.github.com:443
secret API_KEY host 192.0.2.7 [2001:db8::1]:8443 file ~/keys/api
secret CMD_KEY host example.co.uk command pass show web/key # comment
secret GH_TOKEN host ghe.corp.test command gh auth token
secret FILE_KEY host a.test file /run/k
