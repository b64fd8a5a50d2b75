"""TCP SIAD thesis (M. Kühlewind, "Scalable Increase Adaptive Decrease: Congestion Control
supporting Low Latency and High Speed", Univ. Stuttgart, 2016), chapter 4 and appendix C: one
module per reproduced figure or table; settings shared by all of them are in ``common``."""
