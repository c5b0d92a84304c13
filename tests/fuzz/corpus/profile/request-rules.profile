net deny evil.example /usr
net deny evil.example GET,POST
net allow api.example /v1/* private
net ask api.example POST /upload
