"""Analysis models (score sources, reports) arrive with the analysis features."""
