"""The works ccbench reproduces: the experiment packages' names and how the report titles them."""

#: The works, in the order the report shows them: the four of the mission, then the frontier the
#: field moved to.
WORKS = {
    "rledbat": "rLEDBAT / LEDBAT++ — Bagnulo et al., Design, implementation and validation of a "
               "receiver-driven less-than-best-effort transport, Computer Networks 2023 (RFC 9840)",
    "abe": "ABE — Khademi et al., Alternative Backoff: Achieving Low Latency and High Throughput "
           "with ECN and AQM, CAIA TR 150710A (RFC 8511)",
    "siad": "TCP SIAD — Kühlewind, Scalable Increase Adaptive Decrease: Congestion Control "
            "supporting Low Latency and High Speed, PhD thesis, Univ. Stuttgart 2016",
    "fledbat": "fLEDBAT — Carofiglio et al., Rethinking the Low Extra Delay Background Transport "
               "(LEDBAT) Protocol, Computer Networks 2013",
    "l4s": "L4S — De Schepper et al., Dual Queue Coupled AQM: Deployable Very Low Queuing Delay for All "
           "(arXiv 2209.01078, 2022), RFC 9332 (DualPI2), RFC 8257 and Alizadeh et al. 2010 (DCTCP)",
}
