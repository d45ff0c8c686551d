"""Who may use the corpus pages, API and jobs: researchers (and so admins); making a batch
from a corpus also needs the right to create batches (admins)."""

from annotation.access import can_manage_batches
from core.access import holds, permission_class

can_view_corpora = holds("corpora.view_corpus")
can_import_corpora = holds("corpora.add_corpus")
# Import or compute a corpus's embeddings.
can_change_corpora = holds("corpora.change_corpus")
can_analyse_corpora = holds("corpora.analyse_corpus")


def can_make_batches(user) -> bool:
    """Make a batch from a corpus selection: read the corpus and create batches."""
    return can_view_corpora(user) and can_manage_batches(user)


CanImportCorpora = permission_class(can_import_corpora, read_check=can_view_corpora)
CanChangeCorpora = permission_class(can_change_corpora, read_check=can_view_corpora)
CanAnalyseCorpora = permission_class(can_analyse_corpora, read_check=can_view_corpora)
CanMakeBatches = permission_class(can_make_batches, read_check=can_view_corpora)
