"""Loaded into the server by ``bench/memory.py`` (``PYTHONPATH``), only when ``MEMPROBE`` names a folder: on
SIGUSR1 the server writes where its memory is to ``MEMPROBE/report-PID-N.json``. Nothing else changes."""
import collections
import ctypes
import json
import os
import signal
import sys

OUT = os.environ.get("MEMPROBE")


def _mappings() -> dict:
    """Resident kB of each mapped file ('[anon]' for anonymous memory), from /proc/self/smaps."""
    rss, name = collections.Counter(), None
    with open("/proc/self/smaps") as fh:
        for line in fh:
            parts = line.split()
            if "-" in parts[0] and ":" not in parts[0]:
                name = parts[5] if len(parts) > 5 else "[anon]"
            elif parts[0] == "Rss:":
                rss[name] += int(parts[1])
    return dict(rss)


def _mallinfo() -> dict:
    class Info(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                    "fsmblks", "uordblks", "fordblks", "keepcost")]
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = Info
    info = libc.mallinfo2()
    return {n: getattr(info, n) for n, _ in Info._fields_}


def _package(filename: str) -> str:
    if "site-packages/" in filename:
        return filename.split("site-packages/")[1].split("/")[0]
    return "python (stdlib, importlib)" if "python3" in filename or filename.startswith("<frozen") else filename


def _report(signum, frame) -> None:
    import tracemalloc
    out = {"status": {k: v.strip() for k, v in (line.split(":", 1) for line in open("/proc/self/status"))
                      if k in {"VmRSS", "RssAnon", "RssFile", "VmHWM", "Threads"}},
           "mappings": _mappings(), "mallinfo2": _mallinfo(), "modules": sorted(sys.modules),
           "python_blocks": sys.getallocatedblocks()}
    if tracemalloc.is_tracing():
        by = collections.Counter()
        for stat in tracemalloc.take_snapshot().statistics("filename"):
            by[_package(stat.traceback[0].filename)] += stat.size
        out["tracemalloc"] = dict(by)
    cached, compress = sys.modules.get("explorer.ui.cached"), sys.modules.get("explorer.web.compress")
    out["result_cache"] = cached._results.size if cached else None
    out["static_cache"] = compress.STORE.size if compress else None
    models = {}
    if cached:
        for name in cached.WORKER.loaded():
            model = cached.WORKER.get(name).model
            storages = {p.untyped_storage().data_ptr(): p.untyped_storage().nbytes()
                        for p in list(model.parameters()) + list(model.buffers())}
            models[name] = sum(storages.values())
    out["model_bytes"] = models
    n = len([f for f in os.listdir(OUT) if f.startswith(f"report-{os.getpid()}-")])
    with open(os.path.join(OUT, f"report-{os.getpid()}-{n}.json.tmp"), "w") as fh:
        json.dump(out, fh)
    os.rename(fh.name, fh.name[:-4])


if OUT:
    signal.signal(signal.SIGUSR1, _report)
