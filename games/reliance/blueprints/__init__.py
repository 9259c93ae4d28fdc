"""Data package: reliance blueprints (YAML files shipped as package data)."""
