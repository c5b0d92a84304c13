exec allow /
