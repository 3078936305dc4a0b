"""Watch attention learn: a tiny attention-only transformer trained live on a copying task, and what its heads
become (the induction circuit of Elhage et al. 2021 and Olsson et al. 2022).

``config`` (what a run may be, checked before anything runs), ``data`` (sequences with a repeated segment, and the
no-repeat contrast), ``network`` (the model, written out: scores, mask, softmax, weighted sum), ``metrics`` (head
scores on attention patterns and on weights), ``train`` (the seeded loop and what it records), ``circuits`` (the
trained model taken apart: knockouts, composition, the OV and QK circuits), ``runs`` (a run saved and read back, the
ready-made runs shipped with the app). Plain torch and numpy: never Streamlit, never plotly.
"""
