"""vlui."""
