include default
include default.profile
include default
