"""The app's own words: the class's language (``i18n``, ``catalogues``) and a glossary of every term the pages use
(``glossary``). Plain data, no Streamlit. The table of pages, which names these terms, is ``explorer.sitemap``."""
