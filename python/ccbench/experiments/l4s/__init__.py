"""The low-latency frontier (L4S): DualPI2's coupling and delays, DCTCP over a step marker, BBRv3."""
