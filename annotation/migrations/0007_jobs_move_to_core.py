"""Jobs move to the platform layer (core.Job, with a generic subject); the analysis
permission moves to the analysis app. Reversible: jobs about batches are copied back."""

from django.db import migrations

JOB_FIELDS = [
    "id",
    "kind",
    "params",
    "state",
    "progress",
    "total",
    "message",
    "result_path",
    "result",
    "created_by_id",
    "created_at",
    "started_at",
    "finished_at",
]


def _batch_type(apps, alias):
    content_types = apps.get_model("contenttypes", "ContentType")
    return content_types.objects.using(alias).get_or_create(app_label="annotation", model="batch")[
        0
    ]


def jobs_to_core(apps, schema_editor):
    # everything through the migration's own connection (not "default", which behind a
    # transaction pooler is another session)
    alias = schema_editor.connection.alias
    old_jobs = apps.get_model("annotation", "Job")
    new_jobs = apps.get_model("core", "Job")
    batch_type = _batch_type(apps, alias)
    copies = [
        new_jobs(
            subject_type_id=batch_type.pk,
            subject_id=job.batch_id,
            **{name: getattr(job, name) for name in JOB_FIELDS},
        )
        for job in old_jobs.objects.using(alias).all()
    ]
    new_jobs.objects.using(alias).bulk_create(copies, batch_size=1000)
    # the permission now belongs to the analysis app; ensure_roles grants the new one
    apps.get_model("auth", "Permission").objects.using(alias).filter(
        content_type__app_label="annotation", codename="analyse_batch"
    ).delete()


def jobs_back_to_annotation(apps, schema_editor):
    alias = schema_editor.connection.alias
    old_jobs = apps.get_model("annotation", "Job")
    new_jobs = apps.get_model("core", "Job").objects.using(alias)
    batch_type = _batch_type(apps, alias)
    copies = [
        old_jobs(batch_id=job.subject_id, **{name: getattr(job, name) for name in JOB_FIELDS})
        for job in new_jobs.filter(subject_type_id=batch_type.pk, kind__in=KNOWN_KINDS)
    ]
    old_jobs.objects.using(alias).bulk_create(copies, batch_size=1000)
    new_jobs.filter(pk__in=[job.pk for job in copies]).delete()


KNOWN_KINDS = ["export", "import", "analysis"]


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0006_label_annotator_index"),
        ("core", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.RunPython(jobs_to_core, jobs_back_to_annotation),
        migrations.DeleteModel(name="Job"),
        migrations.AlterModelOptions(
            name="batch",
            options={
                "permissions": [
                    ("export_batch", "Can export a batch's labels"),
                    ("manage_annotators", "Can exclude and re-include annotators"),
                ],
                "verbose_name_plural": "batches",
            },
        ),
    ]
