"""Model loads run once, in a thread that no page owns, and every page that needs the model waits on that load.

Streamlit stops a script run when its user leaves the page or moves a widget. A load started inside the page (a
download, the decoder's one-time conversion) would die with it and leave half a cache behind; here a page only
asks for a ``Job`` and watches it, while the load itself runs on in its own thread. Asking again for a model that
is loading returns the same job; a failed load is forgotten, so a later request tries again.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable

from explorer.models import LoadedModel, load_model, log
from explorer.registry import ModelSpec, resolve_spec


@dataclass
class Job:
    """One model's load: its progress while it runs, then its model or its error."""
    name: str
    fraction: float = 0.0
    message: str = ""
    model: LoadedModel | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event, repr=False)

    def report(self, fraction: float, message: str) -> None:
        self.fraction, self.message = min(max(fraction, 0.0), 1.0), message

    def wait(self, timeout: float | None = None) -> LoadedModel:
        """The loaded model (blocking until the load ends); re-raises the load's error."""
        if not self.done.wait(timeout):
            raise TimeoutError(f"{self.name} is still loading.")
        if self.error is not None:
            raise self.error
        return self.model


class ModelWorker:
    """Loaded models by name, at most ``max_models`` of them (the least recently asked for goes first)."""

    def __init__(self, loader: Callable[[ModelSpec], LoadedModel] = load_model, max_models: int | None = None):
        self.loader = loader
        self.max_models = max_models or int(os.environ.get("EXPLORER_MAX_MODELS", "3"))
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()

    def request(self, name: str) -> Job:
        """The job that loads ``name``: the running or finished one if there is one, else a new one started now.

        Raises ModelUnavailable at once for a name that can be no model (nothing is started then).
        """
        spec = resolve_spec(name)
        with self._lock:
            job = self._jobs.get(spec.name)
            if job is not None:
                self._jobs.move_to_end(spec.name)
                return job
            job = self._jobs[spec.name] = Job(spec.name, message=f"Loading {spec.name}…")
            self._evict()
        threading.Thread(target=self._run, args=(job, spec), name=f"load-{spec.name[:40]}", daemon=True).start()
        return job

    def get(self, name: str, timeout: float | None = None) -> LoadedModel:
        return self.request(name).wait(timeout)

    def loaded(self) -> list[str]:
        with self._lock:
            return [name for name, job in self._jobs.items() if job.model is not None]

    def _run(self, job: Job, spec: ModelSpec) -> None:
        try:
            job.model = self.loader(spec, progress=job.report)
        except Exception as err:  # every waiter gets the error; the next request tries again
            job.error = err
            log.warning("loading %s failed: %s", spec.name, str(err).splitlines()[0][:300] if str(err) else err)
            with self._lock:
                if self._jobs.get(spec.name) is job:
                    del self._jobs[spec.name]
        finally:
            job.done.set()

    def _evict(self) -> None:
        """Forget the oldest finished loads beyond ``max_models`` (a load still running is never dropped)."""
        finished = [name for name, job in self._jobs.items() if job.done.is_set()]
        while len(self._jobs) > self.max_models and finished:
            del self._jobs[finished.pop(0)]
