"""Plans: the planners' shared result type, its assembly and its JSON form (DESIGN §5).

:mod:`.types` holds the decisions and the plan, :mod:`.kinds` and
:mod:`.constructions` the tables of generator kinds and constructions (each entry's
capabilities, the keys every stage registers its pieces against), :func:`assemble`
turns a planner's decision into a plan, :mod:`.codec` reads and writes the two schemas
(:mod:`.v1` shared-host, :mod:`.v2` stacked). The checker that re-derives every
number of a plan is :func:`ocsplan.planning.check.check_plan`, a layer above.
"""

from __future__ import annotations

from . import assemble as _assemble
from . import codec as _codec
from . import constructions as _constructions
from . import kinds as _kinds
from . import types as _types
from .assemble import *  # noqa: F403  (the re-export: each module's __all__ is the list)
from .codec import *  # noqa: F403
from .constructions import *  # noqa: F403
from .kinds import *  # noqa: F403
from .types import *  # noqa: F403

__all__ = []
__all__ += _types.__all__
__all__ += _assemble.__all__
__all__ += _codec.__all__
__all__ += _constructions.__all__
__all__ += _kinds.__all__
