"""Draw the report's charts in a forked worker while ``podplan plan`` writes everything else.

matplotlib's import and drawing are most of the report's cost (about 0.7 s of CPU); at 2,048
nodes the rest of the plan's files take longer than that, so on a machine with a second core
the charts come for free. Where ``fork`` is not available, or the worker dies, the charts
are drawn in-process: the output is the same bytes either way.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from generator.emit.report.charts import ChartJob


def draw_all(jobs: Sequence[ChartJob]) -> list[str]:
    """Every chart, in order, in this process."""
    return [job.render() for job in jobs]


def _warm() -> None:
    """Import matplotlib in the worker before the first job arrives."""
    import matplotlib.backends.backend_svg
    import matplotlib.figure  # noqa: F401


class ChartWorker:
    """One forked worker, started early so matplotlib is imported by the time charts come."""

    def __init__(self, background: bool) -> None:
        self._pool: ProcessPoolExecutor | None = None
        if background and "fork" in multiprocessing.get_all_start_methods():
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
            self._pool.submit(_warm)

    def submit(self, jobs: Sequence[ChartJob]) -> Callable[[], list[str]]:
        """Start drawing ``jobs``; call the result to get the SVGs (waits if needed)."""
        if self._pool is None:
            return lambda: draw_all(jobs)
        pool = self._pool
        future: Future[list[str]] = pool.submit(draw_all, list(jobs))

        def result() -> list[str]:
            try:
                return future.result()
            except BrokenProcessPool:
                return draw_all(jobs)
            finally:
                pool.shutdown(wait=True)

        return result
