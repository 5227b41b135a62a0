"""Circuit files (schema ``ocsplan.circuits/1``, or the columnar ``ocsplan.circuits/2`` beyond /1's
limits): a realized plan, its data and JSON.

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
:mod:`.codec` writes and reads /1 (:mod:`.columnar` /2, which builds on it), :mod:`.formats` is the
one entry for either.
"""

from __future__ import annotations

from . import codec as _codec
from . import columnar as _columnar
from . import formats as _formats
from . import labels as _labels
from . import types as _types
from .codec import *  # noqa: F403  (the re-export: each module's __all__ is the list)
from .columnar import *  # noqa: F403
from .formats import *  # noqa: F403
from .labels import *  # noqa: F403
from .types import *  # noqa: F403

__all__ = []
__all__ += _codec.__all__
__all__ += _columnar.__all__
__all__ += _formats.__all__
__all__ += _labels.__all__
__all__ += _types.__all__
