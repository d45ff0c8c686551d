"""The platform layer every app builds on: errors, tabular file reading, row locking,
background jobs and their runner registry, staff roles and access, the audit trail and
the extension points through which apps add tabs, panels and columns to each other's
pages. ``core`` imports no app of this project."""
