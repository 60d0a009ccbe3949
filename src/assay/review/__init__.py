"""The team workflow: assignments and queues, reviews, comments, an item's history, agreement
between annotators, and frozen dataset versions."""
