"""Head geometry: a head's queries and keys over a corpus, aligned and projected into one 2-D map."""
