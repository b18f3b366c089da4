"""Text-processing tools (cat, head, tail, grep, sort, ...), one module per tool or family."""
