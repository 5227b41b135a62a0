"""Deployment files of a plan (layer L11): MSCCL XML schedules and their independent check."""

from __future__ import annotations

from .msccl import MscclError, program_xml

__all__ = ["MscclError", "program_xml"]
