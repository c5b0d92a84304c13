exec allow-writable ../x
