net allow pypi.org:443
net allow *.com
net allow *
