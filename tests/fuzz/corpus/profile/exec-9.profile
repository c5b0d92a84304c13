exec strict now
