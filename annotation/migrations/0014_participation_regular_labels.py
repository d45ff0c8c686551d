"""Each participation keeps the number of its regular labels (``regular_labels``), so that
a request for work reads one column instead of counting label rows; existing
participations get the count of the labels they already gave."""

from django.db import migrations, models
from django.db.models import Count, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

# annotation.models.REGULAR_STATUSES when this migration was written
REGULAR_STATUSES = ("counted", "surplus", "excluded")


def count_existing_labels(apps, schema_editor):
    Label = apps.get_model("annotation", "Label")
    Participation = apps.get_model("annotation", "Participation")
    alias = schema_editor.connection.alias
    given = (
        Label.objects.using(alias)
        .filter(
            batch_id=OuterRef("batch_id"),
            annotator_id=OuterRef("annotator_id"),
            status__in=REGULAR_STATUSES,
        )
        .order_by()
        .values("annotator_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    Participation.objects.using(alias).update(regular_labels=Coalesce(Subquery(given), Value(0)))


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0013_cant_judge_and_comments"),
    ]

    operations = [
        migrations.AddField(
            model_name="participation",
            name="regular_labels",
            field=models.PositiveIntegerField(db_default=0, default=0),
        ),
        migrations.RunPython(count_existing_labels, migrations.RunPython.noop),
    ]
