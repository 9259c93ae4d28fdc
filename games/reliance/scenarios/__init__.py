"""Data package: reliance scenarios (YAML files shipped as package data)."""
