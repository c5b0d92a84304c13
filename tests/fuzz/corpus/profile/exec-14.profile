exec frob
