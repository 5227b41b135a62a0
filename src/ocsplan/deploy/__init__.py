"""Deployment of a plan (layer L11): MSCCL XML schedules and their independent check; what a fault
costs a realized plan, and its repair onto spare accelerators."""

from __future__ import annotations

from .check import CheckError, UnsafeXmlError, XmlCost, check_xml
from .faults import FaultReport, analyse_faults, report_to_dict
from .msccl import MscclError, program_xml

__all__ = ["CheckError", "FaultReport", "MscclError", "UnsafeXmlError", "XmlCost", "analyse_faults", "check_xml",
           "program_xml", "report_to_dict"]
