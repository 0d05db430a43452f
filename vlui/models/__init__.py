"""Neural network modules of the VLUI policy: encoders, fusion and heads."""
