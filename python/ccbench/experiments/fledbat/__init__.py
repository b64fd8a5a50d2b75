"""fLEDBAT paper (Carofiglio, Muscariello, Rossi, Testa, Valenti, "Rethinking the Low Extra
Delay Background Transport (LEDBAT) Protocol", Computer Networks 2013): one module per
reproduced figure."""
