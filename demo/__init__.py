"""The demo: sample batches, model scores and a staff login, loaded by ``manage.py load_demo``.

A project-level app: it uses every other app and none uses it."""
