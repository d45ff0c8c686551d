"""The census's writes: importing a census (``imports``) and analysing it (``analyses``)."""
