include ok.profile
include self.profile
