net allow https://example.com/path
net allow 10.0.0.0/8
net allow a.*.example.com
net allow example.com:65536
net allow [2001:db8::1
net allow café.example
