"""``manage.py analyze_study TYPE NAME [--json FILE] [--set SETTING=VALUE …]``: analyse a subject of
any study type (``core.jobs.commands``)."""

from core.jobs.commands import AnalyzeCommand


class Command(AnalyzeCommand):
    help = (
        "Analyse a subject of a study type (census, genie, lengths, …) as a job in this "
        "process, recorded like one started on its page; --set gives a setting of the "
        "type's run form (e.g. --set bootstrap=200)."
    )
