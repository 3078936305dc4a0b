"""The head atlas: every head of a model across a corpus of real text (its measures and strongest examples),
stored small, read back checked, and the app's own head names checked against it."""
