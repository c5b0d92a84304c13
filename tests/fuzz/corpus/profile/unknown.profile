   	
# only comments
  bogus directive here
