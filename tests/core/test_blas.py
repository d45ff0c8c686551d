"""The analyses hold numpy's BLAS to one thread while they run (core.blas)."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from analysis.services import analyses
from core.blas import single_blas_thread
from tests.factories import make_batch


def _blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_blas_runs_on_one_thread_inside_the_block_only():
    before = _blas_threads()
    assert before, "numpy has a BLAS library"
    with single_blas_thread():
        assert _blas_threads() == {1}
        np.dot(np.ones(1000), np.ones(1000))
    assert _blas_threads() == before


@pytest.mark.django_db
def test_a_batch_report_is_computed_with_one_blas_thread(monkeypatch):
    seen = []
    build = analyses.build_report

    def watched(*args, **kwargs):
        seen.append(_blas_threads())
        return build(*args, **kwargs)

    monkeypatch.setattr(analyses, "build_report", watched)
    report = analyses.analyse_batch(make_batch(n_items=3, per_item=2), n_resamples=10)
    assert seen == [{1}] and report["n_items"] == 0
