module example.com/shop/api

go 1.22
