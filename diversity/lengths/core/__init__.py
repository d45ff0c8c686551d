"""The pure core of the length statistics: records in, figures out; no Django."""
