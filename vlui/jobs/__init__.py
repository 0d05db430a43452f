"""The three jobs users run: collect demonstrations, train a policy, evaluate it. Each is ``run(cfg) -> summary``."""
