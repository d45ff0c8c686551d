"""Who may use the census pages, API and jobs: researchers (and so admins)."""

from core.access import holds, permission_class

can_view_census = holds("census.view_census")
can_import_census = holds("census.add_census")
can_analyse_census = holds("census.analyse_census")


CanImportCensus = permission_class(can_import_census, read_check=can_view_census)
