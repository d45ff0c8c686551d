"""Analyses of model outputs themselves: homogeneity of response pools (Artificial
Hivemind), conformity of a population of answerers (One-Word Census) and feature-level
novelty (Genie). Pure cores under each study's package; loading and pages on top."""
