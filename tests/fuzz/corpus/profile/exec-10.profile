exec allow-writable target
