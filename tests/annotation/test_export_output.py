"""Where ``export_labels`` (and the analysis commands' ``--json``) may write: a regular file
is replaced whole; a FIFO, a device or standard output is written into and stays what
it was (``core.files``). Renaming a temporary file over ``/dev/null``, as root, once
turned it into a regular file on a machine that runs these tests: the pipes here are
FIFOs in the test's own folder, never a real device."""

import io
import os
import stat
import threading

import pyarrow.parquet as pq
import pytest
from django.core.management import CommandError, call_command

from tests.factories import make_batch

pytestmark = pytest.mark.django_db

READ_TIMEOUT_S = 30


class FifoReader:
    """A FIFO in ``folder`` and a thread reading all of it (a daemon: if nothing ever
    opens the FIFO for writing, the test fails instead of hanging)."""

    def __init__(self, folder, name: str):
        self.path = folder / name
        os.mkfifo(self.path)
        self.received: list[bytes] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with open(self.path, "rb") as stream:
            self.received.append(stream.read())

    def content(self) -> bytes:
        self.thread.join(READ_TIMEOUT_S)
        assert self.received, "nothing was written into the FIFO"
        return self.received[0]

    def still_a_fifo(self) -> bool:
        return stat.S_ISFIFO(os.lstat(self.path).st_mode)


def export(batch, target, *options) -> str:
    out = io.StringIO()
    call_command("export_labels", batch.slug, *options, "-o", str(target), stdout=out)
    return out.getvalue()


@pytest.mark.parametrize(
    "options, check",
    [
        (["--dense", "--format", "csv"], lambda data: data.decode().count("\n") == 3),
        (["--dense", "--format", "jsonl"], lambda data: data.decode().count("\n") == 2),
        (["--card", "--format", "md"], lambda data: data.decode().startswith("#")),
        (
            ["--dense", "--format", "parquet"],  # Arrow seeks: written aside, then copied in
            lambda data: pq.read_table(io.BytesIO(data)).num_rows == 2,
        ),
    ],
    ids=["csv", "jsonl", "card", "parquet"],
)
def test_an_export_into_a_fifo_reaches_its_reader_and_leaves_the_fifo(tmp_path, options, check):
    batch = make_batch(n_items=2)
    reader = FifoReader(tmp_path, "pipe")
    summary = export(batch, reader.path, *options)
    assert check(reader.content())
    assert reader.still_a_fifo()
    assert "Exported" in summary
    assert os.listdir(tmp_path) == ["pipe"]  # no temporary file left beside it


def test_a_symbolic_link_to_a_fifo_is_written_through(tmp_path):
    batch = make_batch(n_items=2)
    reader = FifoReader(tmp_path, "pipe")
    (tmp_path / "link.csv").symlink_to(reader.path)
    export(batch, tmp_path / "link.csv", "--dense")
    assert reader.content().decode().count("\n") == 3
    assert reader.still_a_fifo() and (tmp_path / "link.csv").is_symlink()


def test_a_regular_file_is_replaced_whole_and_kept_when_the_export_fails(tmp_path, monkeypatch):
    batch = make_batch(n_items=2)
    target = tmp_path / "labels.csv"
    target.write_text("old content\n")
    target.chmod(0o640)
    export(batch, target, "--dense")
    assert target.read_text().count("\n") == 3
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the file's mode is kept

    def broken(batch, layout, fmt, path, **options):
        with open(path, "w") as stream:
            stream.write("half an exp")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("annotation.management.commands.export_labels.export_to_file", broken)
    with pytest.raises(CommandError, match="cannot write .*No space left on device"):
        export(batch, target, "--dense")
    assert target.read_text().count("\n") == 3  # the previous export, untouched
    assert sorted(os.listdir(tmp_path)) == ["labels.csv"]


def test_a_symbolic_link_to_a_regular_file_keeps_the_link(tmp_path):
    batch = make_batch(n_items=2)
    (tmp_path / "real.csv").write_text("old\n")
    (tmp_path / "link.csv").symlink_to(tmp_path / "real.csv")
    export(batch, tmp_path / "link.csv", "--dense")
    assert (tmp_path / "link.csv").is_symlink()
    assert (tmp_path / "real.csv").read_text().count("\n") == 3


def test_a_folder_is_refused_with_a_message(tmp_path):
    batch = make_batch(n_items=1)
    with pytest.raises(CommandError, match="cannot write"):
        export(batch, tmp_path, "--dense", "--format", "csv")


def test_dash_writes_to_standard_output_and_the_summary_to_standard_error(monkeypatch):
    batch = make_batch(n_items=2)
    binary = io.BytesIO()
    stdout = io.TextIOWrapper(binary, encoding="utf-8")
    stderr = io.StringIO()
    monkeypatch.setattr("sys.stdout", stdout)
    call_command("export_labels", batch.slug, "--dense", "--format", "parquet", "-o", "-",
                 stderr=stderr)  # fmt: skip
    assert pq.read_table(io.BytesIO(binary.getvalue())).num_rows == 2
    assert (
        stderr.getvalue().startswith("Exported 2 items") and "standard output" in stderr.getvalue()
    )
    text = io.StringIO()
    call_command("export_labels", batch.slug, "--dense", "--format", "csv", "-o", "-",
                 stdout=text, stderr=io.StringIO())  # fmt: skip
    assert text.getvalue().count("\n") == 3


def test_dash_needs_a_format():
    batch = make_batch(n_items=1)
    with pytest.raises(CommandError, match="--format"):
        call_command("export_labels", batch.slug, "-o", "-")


def test_analysis_commands_write_their_json_into_a_fifo(tmp_path):
    import json

    from diversity.genie.services.imports import import_genie
    from tests.diversity import genie_set as hand

    import_genie("hand", hand.upload(hand.jsonl()), filename="judgments.jsonl")
    reader = FifoReader(tmp_path, "report")
    call_command("analyze_genie", "hand", "--bootstrap", "10", "--json", str(reader.path),
                 stdout=io.StringIO())  # fmt: skip
    assert json.loads(reader.content())["n_documents"] > 0
    assert reader.still_a_fifo()


def test_analyze_writes_its_report_into_a_fifo(tmp_path):
    import json

    from annotation.services.labelling import submit_label
    from annotation.services.leasing import lease_next_item
    from tests.factories import make_participant

    batch = make_batch(n_items=3, per_item=2)
    for value, person in enumerate(make_participant(batch) for _ in range(2)):
        while (lease := lease_next_item(batch, person).assignment) is not None:
            submit_label(person.annotator, lease.pk, 1 + (value + lease.item.pk) % 5, 1000)
    reader = FifoReader(tmp_path, "report")
    call_command("analyze", batch.slug, "--bootstrap", "10", "--json", str(reader.path),
                 stdout=io.StringIO())  # fmt: skip
    assert json.loads(reader.content())["n_labels"] == 6
    assert reader.still_a_fifo()
    # nothing beside the FIFO (the job keeps its own report under the data folder)
    assert sorted(os.listdir(tmp_path)) == ["data", "report"]
