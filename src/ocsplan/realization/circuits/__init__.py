"""Circuit files (schema ``ocsplan.circuits/1``): a realized plan, its data and JSON.

What :func:`ocsplan.realize.realize` returns and ``ocsplan realize`` writes,
and all that :mod:`ocsplan.validate` and the simulator read: per node and port
the peer and generator; every circuit with its path through the OCS devices
(so each hop can be priced with ``fabric.latency.hop(ocs=stages, cables=...)``);
per device its cross-connects; per demand the routing table of its schedule;
Figure-25-style counts. Nodes are plan ranks; ``placement.accelerator[x]`` is
the fabric accelerator that runs rank x.

The reader only checks the shape of the file (PlanError, exit status 2): a
file that parses may still be wrong, which is the validator's business.
:mod:`.labels` names the generators, :mod:`.types` holds the data,
:mod:`.codec` writes and reads the JSON.
"""

from __future__ import annotations

from .codec import (
    KEYS,
    SCHEMA,
    circuits_from_dict,
    circuits_to_dict,
    dumps_circuits,
    load_circuits,
    loads_circuits,
    write_circuits,
)
from .labels import CIRCULANT, circulant_label, generator_label, parse_circulant, parse_label, shift
from .types import (
    Circuit,
    Circuits,
    Counts,
    Device,
    FabricRef,
    GeneratorUse,
    Hop,
    NodePort,
    Placement,
    PlanRef,
    Route,
    by_port,
    fabric_mismatch,
    plan_mismatch,
)

__all__ = [
    "CIRCULANT",
    "KEYS",
    "SCHEMA",
    "Circuit",
    "Circuits",
    "Counts",
    "Device",
    "FabricRef",
    "GeneratorUse",
    "Hop",
    "NodePort",
    "Placement",
    "PlanRef",
    "Route",
    "by_port",
    "circuits_from_dict",
    "circuits_to_dict",
    "circulant_label",
    "dumps_circuits",
    "fabric_mismatch",
    "generator_label",
    "load_circuits",
    "loads_circuits",
    "parse_circulant",
    "parse_label",
    "plan_mismatch",
    "shift",
    "write_circuits",
]
