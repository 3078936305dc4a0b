"""The app's own words: a glossary of every term the pages use (``glossary``), and for each page what a student
does there, the question it answers and the terms it uses (``pages``). Plain data, no Streamlit."""
