"""rLEDBAT paper: one module per reproduced table or figure."""
