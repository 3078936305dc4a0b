"""What the server adds to Streamlit's own web layer (plain ASGI, no streamlit import): compressed static files."""
