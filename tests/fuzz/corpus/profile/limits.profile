limit pids 64
limit memory 1.5G
limit tmp 8M
limit home 1024k
limit cpu 0.25
limit cpu unlimited
limit tmp 100.5
