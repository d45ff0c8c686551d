"""Who may use the Genie pages, API and jobs: researchers (and so admins)."""

from core.access import holds, permission_class

can_view_genie = holds("genie.view_genieset")
can_import_genie = holds("genie.add_genieset")
can_analyse_genie = holds("genie.analyse_genie")


CanImportGenie = permission_class(can_import_genie, read_check=can_view_genie)
CanAnalyseGenie = permission_class(can_analyse_genie, read_check=can_view_genie)
