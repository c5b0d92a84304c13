include a.profile
