"""Holding numpy's maths library (BLAS) to one thread around an analysis."""

from contextlib import AbstractContextManager, nullcontext


def single_blas_thread() -> AbstractContextManager:
    """Limit BLAS to one thread for the ``with`` block, when threadpoolctl is installed.

    The analyses' products are small, or already spread over cores by the analysis itself
    (the bootstrap's threads, Celery's worker processes): BLAS threads gain nothing there
    and, when other work shares the cores, spin-wait each other into slowdowns of 50x and
    more. A BLAS thread count also decides the order in which long dot products are
    summed, so with one thread the last bit of a figure (a Pearson r) no longer depends
    on how many cores the machine has. The limit is process-wide while the block runs.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
