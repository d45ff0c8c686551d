"""Every state change of the annotation domain has exactly one entry point here.

Views, API views, management commands and Celery tasks call these functions and only
translate their input and output.
"""
