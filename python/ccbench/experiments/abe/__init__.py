"""ABE (Alternative Backoff with ECN) paper: one module per reproduced figure."""
