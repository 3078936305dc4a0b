"""Curated example texts: the seeds' sentences first, then a few that show common head patterns. The sentences
stay English (the models read English); their labels are marked ``N_`` and shown through ``_()``."""
from explorer.words.i18n import N_

ANIMAL_TIRED = "The animal didn't cross the street because it was too tired."
ANIMAL_WIDE = "The animal didn't cross the street because it was too wide."

EXAMPLES = {
    N_("Pronoun: it … tired"): ANIMAL_TIRED,
    N_("Pronoun: it … wide"): ANIMAL_WIDE,
    N_("Long-range agreement"): ("The report that the committee, after months of deliberation and three separate "
                                 "rounds of public consultation, finally published last Tuesday was widely condemned."),
    N_("Word order: dog bites man"): "dog bites man",
    N_("Word order: man bites dog"): "man bites dog",
    N_("Masked word"): "the cat sat on the mat",
    N_("Negation"): "the film was not good at all",
    N_("Repeated words"): "the cat saw the dog and the dog saw the cat",
}

# Minimal pairs for the flip page. A causal decoder's query must come after the changed word to see it.
ENCODER_PAIR = N_("it … tired / wide (encoder)")
DECODER_PAIR = N_("tired / wide … then it (decoder)")
FLIP_PAIRS = {
    ENCODER_PAIR: (ANIMAL_TIRED, ANIMAL_WIDE, "it", ["animal", "street"]),
    DECODER_PAIR: (ANIMAL_TIRED + " In short, it", ANIMAL_WIDE + " In short, it", "it", ["animal", "street"]),
}
