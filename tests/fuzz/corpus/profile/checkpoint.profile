checkpoint on
checkpoint max-size 1.5G
checkpoint exclude node_modules
checkpoint exclude build/*.o
checkpoint keep 5
checkpoint keep-days 7
checkpoint off
checkpoint max-size unlimited
checkpoint exclude /abs
