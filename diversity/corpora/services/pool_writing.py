"""Writing a response pool fast, inside the import's one transaction (``imports``).

Responses go in by ``COPY`` on PostgreSQL (multi-row inserts elsewhere), each query's
response count is set in one statement once every response is written, and the planner's
statistics are refreshed, since the freshly filled tables still look empty to it.
"""

from django.db import connection

from core.row_writing import RowInserter
from diversity.corpora.models import CorpusModel, CorpusQuery, CorpusResponse

__all__ = ["ResponseWriter", "refresh_planner_statistics", "store_query_counts"]


class ResponseWriter:
    """Writes response rows: ``COPY`` on PostgreSQL, multi-row inserts elsewhere."""

    COLUMNS = ["corpus", "query", "model", "sample", "response_id", "text", "row_index"]

    def __init__(self) -> None:
        meta = CorpusResponse._meta
        self.copy = connection.vendor == "postgresql"
        if self.copy:
            quote = connection.ops.quote_name
            columns = ", ".join(quote(meta.get_field(name).column) for name in self.COLUMNS)
            self.sql = f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN"
        else:
            self.inserter = RowInserter(CorpusResponse, self.COLUMNS)

    def write(self, rows: list[list]) -> None:
        if not self.copy:
            self.inserter.insert(rows)
            return
        with connection.cursor() as cursor:
            with cursor.cursor.copy(self.sql) as copy:  # the psycopg cursor under Django's
                for row in rows:
                    copy.write_row(row)


def store_query_counts(pairs: list[tuple[int, int]]) -> None:
    """Set ``n_responses`` of each query: ``pairs`` are (count, query pk)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            table = connection.ops.quote_name(CorpusQuery._meta.db_table)
            cursor.execute(
                f"UPDATE {table} AS q SET n_responses = v.n "
                "FROM unnest(%s::bigint[], %s::integer[]) AS v(id, n) WHERE q.id = v.id",
                [[pk for _, pk in pairs], [n for n, _ in pairs]],
            )
        else:
            table = connection.ops.quote_name(CorpusQuery._meta.db_table)
            cursor.executemany(f"UPDATE {table} SET n_responses = %s WHERE id = %s", pairs)


def refresh_planner_statistics() -> None:
    """Fresh statistics for PostgreSQL's planner after a bulk load (the tables looked empty)."""
    if connection.vendor != "postgresql":
        return
    tables = ", ".join(
        connection.ops.quote_name(model._meta.db_table)
        for model in (CorpusQuery, CorpusModel, CorpusResponse)
    )
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {tables}")
