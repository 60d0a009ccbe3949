"""The gold standard: items, their turns and evidence, checks and taxonomy, conversations,
answering turns with retrieval and an LLM, and synthesis of draft items."""
