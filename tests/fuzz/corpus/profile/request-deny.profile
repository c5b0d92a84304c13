# network rules, every accepted form
include default
net allow example.com
net allow Example.COM              # the same rule again
net allow *.example.org private
net allow registry.npmjs.org:443
net allow 192.0.2.1:8080
net allow [2001:db7::1]:443
net allow 2000:DB8::2
net allow git.internal.test private
net deny evil.exampl-write /us*r
read-onle.com
net deny *.tracker.example$.net:80
net deny 169.254.169.254
net deny [fd00:ec2::254]
