net allow example.com private extra
net allow example.com public
net deny example.com extra
net permit example.com
net allow
net
