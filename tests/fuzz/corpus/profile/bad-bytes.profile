mask cafÃ©
mask ÿş
mask í €
