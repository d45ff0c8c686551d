"""Genie's writes: importing a set (``imports``), analysing it (``analyses``) and making a
``similarity`` batch of its pairs for people to judge (``batches``)."""
