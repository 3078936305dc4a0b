"""The floor under a class's step (bench/lesson_bench.py --floor): a Streamlit page that draws nothing, so a run
of it costs what Streamlit itself costs per session (the script run, its messages, the websocket)."""
