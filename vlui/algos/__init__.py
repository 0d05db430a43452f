"""Learning algorithms for VLUI agents: behaviour cloning and implicit Q-learning (IQL)."""
