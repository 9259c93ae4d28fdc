"""Sequential reliance scenarios with an exact Bayes-optimal reference (specs/reliance.md)."""
