"""Long operations as jobs: recorded with state and progress, run by Celery.

* ``kinds`` — the registry: each app registers a runner per job kind, with who may see
  its jobs (a system check makes sure every kind an app declares has a runner);
* ``execution`` — running a recorded job, its progress, the folder for its files;
* ``queue`` — ``start_job``: record a job and hand it to the ``core.tasks.run_job``
  task once the transaction commits. With ``REDIS_URL`` set a worker process runs it;
  without, Celery runs it in-process before ``start_job`` returns.
"""
