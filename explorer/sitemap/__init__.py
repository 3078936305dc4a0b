"""The app's map: the one table of its pages (``table``), a floor above what it names (the labs' tabs, the
embedded models, the glossary's terms), so that everything that lists or links pages reads it from one place.
Plain data, no Streamlit."""
