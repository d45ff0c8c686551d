"""Drop the indexes of six foreign keys that another index already leads with.

Each was one more index to write with every lease and every label (an item or assignment
row whose indexed columns change is written again in every index). Only the indexes go:
the foreign keys stay as they are, so no table is rewritten or its keys checked again
(Django's own AlterField would drop and re-add each key, checking every row under a lock).
"""

import django.db.models.deletion
from django.db import migrations, models

# (index, table, column, the index that leads with the same column and stays)
DROPPED = [
    ("annotation_assignment_annotator_id_5d071d66", "annotation_assignment", "annotator_id",
     "assignment_annotator_state"),
    ("annotation_assignment_batch_id_1bcffc6e", "annotation_assignment", "batch_id",
     "assignment_open_expiry"),
    ("annotation_item_batch_id_3b1911f8", "annotation_item", "batch_id",
     "item_id_unique_in_batch"),
    ("annotation_label_annotator_id_fc5a16d9", "annotation_label", "annotator_id",
     "label_annotator_batch"),
    ("annotation_label_batch_id_ce767e4f", "annotation_label", "batch_id",
     "label_batch_status"),
    ("annotation_participation_batch_id_838eafc5", "annotation_participation", "batch_id",
     "participation_unique_annotator"),
]  # fmt: skip


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0017_batch_settings_help_from_spec"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{name}"',
                    # unapplied, the indexes come back, as the model state then says
                    reverse_sql=f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" ("{column}")',
                )
                for name, table, column, _ in DROPPED
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="assignment",
                    name="annotator",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="assignments",
                        to="annotation.annotator",
                    ),
                ),
                migrations.AlterField(
                    model_name="assignment",
                    name="batch",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="assignments",
                        to="annotation.batch",
                    ),
                ),
                migrations.AlterField(
                    model_name="item",
                    name="batch",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="items",
                        to="annotation.batch",
                    ),
                ),
                migrations.AlterField(
                    model_name="label",
                    name="annotator",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="labels",
                        to="annotation.annotator",
                    ),
                ),
                migrations.AlterField(
                    model_name="label",
                    name="batch",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="labels",
                        to="annotation.batch",
                    ),
                ),
                migrations.AlterField(
                    model_name="participation",
                    name="batch",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="participations",
                        to="annotation.batch",
                    ),
                ),
            ],
        ),
    ]
