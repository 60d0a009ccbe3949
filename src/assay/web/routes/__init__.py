"""Web routes, one module per stage."""
