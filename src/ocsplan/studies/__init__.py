"""Studies: generated instance families, batch runs and their summaries.

``families`` makes instances, ``runner`` solves them (cached in ``results``'s
CSV), ``summary`` reports what the study found.
"""

from __future__ import annotations

from .families import FAMILIES, generate, generate_instance
from .results import CSV_COLUMNS, EXACT_METHODS, Result, dumps_results, read_results, table_rows, write_results
from .runner import collect_paths, default_workers, run_method, run_study
from .summary import Summary, gap_image, summarize

__all__ = [
    "CSV_COLUMNS",
    "EXACT_METHODS",
    "FAMILIES",
    "Result",
    "Summary",
    "collect_paths",
    "default_workers",
    "dumps_results",
    "gap_image",
    "generate",
    "generate_instance",
    "read_results",
    "run_method",
    "run_study",
    "summarize",
    "table_rows",
    "write_results",
]
