"""The rows of an unfinished local-model run that are done, as ranges (``row_ranges``):
parts finish in any order, and the next run embeds exactly the gaps, cut as an
uninterrupted run cuts them."""

from diversity.corpora.services.row_ranges import covers, missing_chunks, rows_in, with_range


def test_ranges_merge_as_parts_finish_in_any_order():
    done = []
    for start, stop in [(8, 12), (0, 4), (16, 20), (4, 8)]:
        done = with_range(done, start, stop)
    assert done == [[0, 12], [16, 20]]
    assert rows_in(done) == 16
    assert covers(done, 4, 12) and covers(done, 16, 20)
    assert not covers(done, 10, 14) and not covers(done, 12, 16)


def test_the_chunks_left_are_the_gaps_cut_from_their_start():
    rows = list(range(22))
    assert missing_chunks([], 22, 8) == [(0, 8), (8, 16), (16, 22)]
    assert missing_chunks([[0, 8]], 22, 8) == [(8, 16), (16, 22)]  # as a run stopped in order
    left = missing_chunks([[0, 4], [8, 12], [20, 22]], 22, 8)
    assert left == [(4, 8), (12, 20)]
    covered = sorted(row for start, stop in left for row in range(start, stop))
    assert covered == [row for row in rows if not (row < 4 or 8 <= row < 12 or row >= 20)]
    assert missing_chunks([[0, 22]], 22, 8) == []
