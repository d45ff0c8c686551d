"""Who may analyse: the analysis app's permissions, granted to researchers (and so admins)."""

from core.access import holds, permission_class

can_analyse = holds("analysis.analyse_batch")


CanAnalyse = permission_class(can_analyse)
