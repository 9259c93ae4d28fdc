"""Trust dynamics in the escape room: loading, measures, intervals, tables, figures and reports.

Entry point: ``python -m analysis trust DIR... --out REPORT_DIR`` (see ``docs/analysis.md``).
"""
