"""Slow shared work (model loads, sweeps) runs once, in a thread no page owns, and every page that needs it waits.

Streamlit stops a script run when its user leaves the page or moves a widget. Slow work started inside the page (a
download, the decoder's one-time conversion, a sweep over every head) would die with it and leave half a result
behind; here a page only asks for a ``Job`` and watches it, while the work runs on in its own thread. Asking again
for work that is running returns the same job; a failed job is forgotten, so a later request tries again. A job
has a deadline: past it, its waiters get one sentence, the server's log says which work (its key) stalled, and a later
request starts it again (a Python thread cannot be killed: the stalled one's late value, if any, is dropped). A
``Jobs`` keeps only the work that runs: a finished value goes to its cache region (``serving.regions``), bounded by
bytes and listed in ``/_explorer/stats`` with every other byte the server keeps.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable, Hashable

from explorer.model.loading import LoadedModel, load_model, log
from explorer.model.registry import resolve_spec
from explorer.serving import regions
from explorer.serving.cache import ByteLRU
from explorer.words import i18n
from explorer.words.i18n import N_, Later

DEADLINE_S = 15 * 60.0   # how long a job may run before its waiters are told it stalled (a model download may be slow)


class Stalled(RuntimeError):
    """Work past its deadline: ``str()`` is one sentence in the reader's language."""

    def __str__(self) -> str:
        return str(Later(N_("This work took too long and the server gave up on it: ask again to retry.")))


@dataclass
class Job:
    """One piece of slow work: its progress while it runs, then its value or its error."""
    name: str
    fraction: float = 0.0
    message: object = ""   # a text, or an i18n.Later read in the language of the page showing it
    lang: str = i18n.SOURCE   # the language it was asked in: its sentences are made in it, in its own thread
    value: object = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event, repr=False)

    def report(self, fraction: float, message: str) -> None:
        self.fraction, self.message = min(max(fraction, 0.0), 1.0), message

    def wait(self, timeout: float | None = None):
        """The value (blocking until the work ends); re-raises the work's error."""
        if not self.done.wait(timeout):
            raise TimeoutError(f"{self.name} is still running.")
        if self.error is not None:
            raise self.error
        return self.value


_MISSING = object()


class Jobs:
    """Slow work by key, each run once in a daemon thread of its own. A job is in this table only while it runs:
    a finished value is handed to ``store`` (a cache region's byte-bounded store, from ``explorer/jobs/keepers.py``;
    under ``(tag, key)`` when a ``tag`` is given, a region several keepers share) and asked for there again, so the
    region's bounds decide how long it stays, and a value the region dropped is computed again on the next ask. A
    failure is forgotten, so that asking again tries again. ``keep``: the bound on the number of finished values of
    a store of its own (a test's Jobs, built without ``store``)."""

    def __init__(self, keep: int | None = None, deadline_s: float = DEADLINE_S, *, store: ByteLRU | None = None,
                 tag: str | None = None):
        self.deadline_s, self.tag = deadline_s, tag
        self.store = store if store is not None else regions.unlisted("work", keep)
        self._running: dict[Hashable, Job] = {}
        self._lock = threading.Lock()

    def _stored(self, key: Hashable) -> Hashable:
        return key if self.tag is None else (self.tag, key)

    def _mine(self, stored: Hashable) -> Hashable | None:
        """The job key of a key of the store, if it is one of this table's (``_MISSING`` if not)."""
        if self.tag is None:
            return stored
        if isinstance(stored, tuple) and len(stored) == 2 and stored[0] == self.tag:
            return stored[1]
        return _MISSING

    def _finished_job(self, key: Hashable) -> Job | None:
        """A finished job holding the store's value of ``key`` (counted as a hit there), or None."""
        value = self.store.peek(self._stored(key), _MISSING)
        if value is _MISSING:
            return None
        job = Job(str(key), fraction=1.0, value=value)
        job.done.set()
        return job

    def run(self, key: Hashable, work: Callable[[Callable[[float, str], None]], object], name: str = "",
            lang: str = i18n.SOURCE) -> Job:
        """The job for ``key``: the running one, or a finished one holding the region's value, else ``work(progress)``
        started now, made in ``lang`` (the asking session's ``i18n.current()`` where its sentences are shown as they
        were made; English for work shared by every language, whose texts are ``Later``s read in each page's
        language)."""
        with self._lock:
            job = self._running.get(key) or self._finished_job(key)
            if job is not None:
                return job
            job = self._running[key] = Job(name or str(key), message=Later(N_("Preparing {name}…"),
                                                                           name=name or key),
                                           lang=i18n.spoken(lang) or i18n.SOURCE)
        watch = threading.Timer(self.deadline_s, self._expire, (key, job))
        watch.daemon = True
        watch.start()
        threading.Thread(target=self._run, args=(key, job, work, watch), name=f"job-{job.name[:40]}",
                         daemon=True).start()
        return job

    def peek(self, key: Hashable) -> Job | None:
        """The running job for ``key``, or a finished one holding the region's value, if any; starts nothing."""
        with self._lock:
            return self._running.get(key) or self._finished_job(key)

    def running(self) -> list[Hashable]:
        """The keys of the jobs running now."""
        with self._lock:
            return list(self._running)

    def finished(self) -> list[Hashable]:
        """The keys whose finished values the region holds, the least recently asked for first."""
        return [k for k in map(self._mine, self.store.keys()) if k is not _MISSING]

    def keys(self) -> list[Hashable]:
        """The keys of the jobs running or finished well (a failed one is forgotten)."""
        running = self.running()
        return [k for k in self.finished() if k not in running] + running

    def held_bytes(self) -> int:
        """The bytes of this table's finished values in its region."""
        return sum(n for k, n in self.store.sizes() if self._mine(k) is not _MISSING)

    def _run(self, key: Hashable, job: Job, work, watch: threading.Timer) -> None:
        value, error = None, None
        try:
            with i18n.language(job.lang):
                value = work(job.report)
        except Exception as err:  # every waiter gets the error; the next request tries again
            error = err
            log.warning("%s (%r) failed: %s", job.name, key, str(err).splitlines()[0][:300] if str(err) else repr(err))
        watch.cancel()
        self._end(key, job, value, error)

    def _expire(self, key: Hashable, job: Job) -> None:
        self._end(key, job, None, Stalled(), lambda: log.warning(   # in the log before any waiter wakes
            "%s (%r) stopped answering: given up after %.0f s", job.name, key, self.deadline_s))

    def _end(self, key: Hashable, job: Job, value, error: BaseException | None,
             said: Callable[[], None] | None = None) -> bool:
        """Whether this ended ``job`` (its work, or its deadline, whichever came first): a value goes to the region,
        then the job leaves the table (both under the lock, so an asker finds it in one or the other)."""
        size = self.store.sizeof(value) if error is None else 0   # measured outside the store's lock
        with self._lock:
            if job.done.is_set():
                return False
            job.value, job.error = value, error
            if self._running.get(key) is job:
                if error is None:
                    self.store.put(self._stored(key), value, size)
                del self._running[key]
            if said is not None:
                said()
            job.done.set()
        return True


class ModelWorker:
    """Loaded models by name, each loaded once in a thread of its own; the loaded ones are kept by the ``models``
    region (at most ``max_models`` of them, and a byte budget), or by a store of ``max_models`` of its own."""

    def __init__(self, loader: Callable[..., LoadedModel] = load_model, max_models: int | None = None,
                 jobs: Jobs | None = None):
        self.loader = loader
        self._jobs = jobs if jobs is not None else Jobs(   # the server's: keepers.jobs("models")
            store=regions.unlisted("models", max_models or regions.max_entries("models")))
        self.max_models = self._jobs.store.max_entries

    def request(self, name: str) -> Job:
        """The job that loads ``name`` (``job.wait()`` gives the LoadedModel). Raises ModelUnavailable at once
        for a name that can be no model; nothing is started then."""
        spec = resolve_spec(name)
        return self._jobs.run(spec.name, lambda progress: self.loader(spec, progress=progress), spec.name)

    def get(self, name: str, timeout: float | None = None) -> LoadedModel:
        return self.request(name).wait(timeout)

    def loaded(self) -> list[str]:
        return self._jobs.finished()

    def requested(self) -> list[str]:
        """The models loaded or loading now: someone on this server already chose to load them."""
        return self._jobs.keys()
