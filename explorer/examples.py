"""Curated example texts: the seeds' sentences first, then a few that show common head patterns."""

ANIMAL_TIRED = "The animal didn't cross the street because it was too tired."
ANIMAL_WIDE = "The animal didn't cross the street because it was too wide."

EXAMPLES = {
    "Pronoun: it … tired": ANIMAL_TIRED,
    "Pronoun: it … wide": ANIMAL_WIDE,
    "Long-range agreement": ("The report that the committee, after months of deliberation and three separate rounds "
                             "of public consultation, finally published last Tuesday was widely condemned."),
    "Word order: dog bites man": "dog bites man",
    "Word order: man bites dog": "man bites dog",
    "Masked word": "the cat sat on the mat",
    "Negation": "the film was not good at all",
    "Repeated words": "the cat saw the dog and the dog saw the cat",
}

# Minimal pairs for the flip page. A causal decoder's query must come after the changed word to see it.
ENCODER_PAIR = "it … tired / wide (encoder)"
DECODER_PAIR = "tired / wide … then it (decoder)"
FLIP_PAIRS = {
    ENCODER_PAIR: (ANIMAL_TIRED, ANIMAL_WIDE, "it", ["animal", "street"]),
    DECODER_PAIR: (ANIMAL_TIRED + " In short, it", ANIMAL_WIDE + " In short, it", "it", ["animal", "street"]),
}
