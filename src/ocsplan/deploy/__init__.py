"""Deployment files of a plan (layer L11): MSCCL XML schedules and their independent check."""

from __future__ import annotations

from .check import CheckError, XmlCost, check_xml
from .msccl import MscclError, program_xml

__all__ = ["CheckError", "MscclError", "XmlCost", "check_xml", "program_xml"]
