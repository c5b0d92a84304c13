exec default deny
