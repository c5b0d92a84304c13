net allow example.com private
net deny example.com private
