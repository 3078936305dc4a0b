"""Slow shared work (model loads, sweeps) runs once, in a thread no page owns, and every page that needs it waits.

Streamlit stops a script run when its user leaves the page or moves a widget. Slow work started inside the page (a
download, the decoder's one-time conversion, a sweep over every head) would die with it and leave half a result
behind; here a page only asks for a ``Job`` and watches it, while the work runs on in its own thread. Asking again
for work that is running returns the same job; a failed job is forgotten, so a later request tries again. A job
has a deadline: past it, its waiters get one sentence, the server's log says which work (its key) stalled, and a later
request starts it again (a Python thread cannot be killed: the stalled one's late value, if any, is dropped).
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Hashable

from explorer.model.loading import LoadedModel, load_model, log
from explorer.model.registry import resolve_spec
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


class Jobs:
    """Slow work by key, each run once in a daemon thread of its own; the last ``keep`` finished values stay
    (the least recently asked for goes first), a failure is forgotten so that asking again tries again."""

    def __init__(self, keep: int, deadline_s: float = DEADLINE_S):
        self.keep, self.deadline_s = keep, deadline_s
        self._jobs: OrderedDict[Hashable, Job] = OrderedDict()
        self._lock = threading.Lock()

    def run(self, key: Hashable, work: Callable[[Callable[[float, str], None]], object], name: str = "",
            lang: str = i18n.SOURCE) -> Job:
        """The job for ``key``: the running or finished one if there is one, else ``work(progress)`` started now,
        made in ``lang`` (the asking session's ``i18n.current()`` where its sentences are shown as they were made;
        English for work shared by every language, whose texts are ``Later``s read in each page's language)."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None:
                self._jobs.move_to_end(key)
                return job
            job = self._jobs[key] = Job(name or str(key), message=Later(N_("Preparing {name}…"), name=name or key),
                                        lang=i18n.spoken(lang) or i18n.SOURCE)
            finished = [k for k, j in self._jobs.items() if j.done.is_set()]
            while len(self._jobs) > self.keep and finished:   # a job still running is never dropped
                del self._jobs[finished.pop(0)]
        watch = threading.Timer(self.deadline_s, self._expire, (key, job))
        watch.daemon = True
        watch.start()
        threading.Thread(target=self._run, args=(key, job, work, watch), name=f"job-{job.name[:40]}",
                         daemon=True).start()
        return job

    def peek(self, key: Hashable) -> Job | None:
        """The running or finished job for ``key``, if any; starts nothing."""
        with self._lock:
            return self._jobs.get(key)

    def keys(self) -> list[Hashable]:
        """The keys of the jobs running or finished well (a failed one is forgotten)."""
        with self._lock:
            return list(self._jobs)

    def finished(self) -> list[Hashable]:
        with self._lock:
            return [key for key, job in self._jobs.items() if job.done.is_set() and job.error is None]

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
        self._end(key, job, None, Stalled(), said=("%s (%r) stopped answering: given up after %g s", job.name, key,
                                                   self.deadline_s))

    def _end(self, key: Hashable, job: Job, value, error: BaseException | None, said: tuple = ()) -> bool:
        """Whether this ended ``job`` (its work, or its deadline, whichever came first); ``said``: the log line of an
        ending that needs one, written before any waiter wakes."""
        with self._lock:
            if job.done.is_set():
                return False
            job.value, job.error = value, error
            if error is not None and self._jobs.get(key) is job:
                del self._jobs[key]
            if said:
                log.warning(*said)
            job.done.set()
        return True


class ModelWorker:
    """Loaded models by name, at most ``max_models`` of them, each loaded once in a thread of its own."""

    def __init__(self, loader: Callable[..., LoadedModel] = load_model, max_models: int | None = None,
                 jobs: Jobs | None = None):
        self.loader = loader
        self.max_models = jobs.keep if jobs is not None else max_models or int(os.environ.get("EXPLORER_MAX_MODELS",
                                                                                             "3"))
        self._jobs = jobs if jobs is not None else Jobs(self.max_models)   # the server's: keepers.jobs("models")

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
