exec allow /usr
