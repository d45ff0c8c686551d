"""Label exports (FORMATS.md, "Labels (export)"), streamed with bounded memory.

* ``schema`` — every export column, with its type and meaning, per layout and kind: the
  single source the writers, the API documentation and the data card read;
* ``rows`` — the rows of each layout, read from the database in chunks;
* ``formats`` — JSONL, CSV and Parquet writers (and the CSV formula guard);
* ``card`` — the Markdown data card;
* ``delivery`` — the entry points: ``export_to_file`` (command, jobs) and
  ``stream_export`` (HTTP), with progress and the audit record of each export.
"""
