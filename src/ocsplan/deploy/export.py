"""A plan's collective schedules as MSCCL files, and the check of such a directory.

:func:`export_msccl` returns the directory's files as text (name -> content; the
CLI writes them atomically): one XML per demand, ``<mesh>.<axis>.<demand>.xml``,
and ``index.json`` mapping each group's local ranks to accelerators with the cost
model's (h, v). :func:`check_export` re-reads such a directory's texts and runs the
independent checker on every file against the index's graph and closed form.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from ..cayley import coset_bases, expand
from ..files import read_json
from ..plan import Plan, construction, demand_topology
from ..realization.circuits import Circuits, plan_mismatch
from ..schedules import closed_form, verify
from ..schedules import program as build
from .check import CheckError, XmlCost, check_xml
from .check_read import INT16
from .msccl import MAX_STEPS, MscclError, program_xml

__all__ = ["INDEX", "INDEX_SCHEMA", "check_export", "export_msccl"]

INDEX = "index.json"
INDEX_SCHEMA = "ocsplan.export-index/1"
INDEX_SCHEMAS = (INDEX_SCHEMA, "ocsplan.export-index/2")  # 2: with the circuits' ports


def export_msccl(plan: Plan, protocol: str = "Simple", max_steps: int = MAX_STEPS,
                 progress: Callable[[int, int], None] | None = None, circuits: Circuits | None = None,
                 circuits_source: str = "--circuits") -> dict[str, str]:
    """File name -> text of the MSCCL export of every demand of ``plan``; ``progress(done,
    total)`` after each demand. With ``circuits`` (the plan realized, ``ocsplan realize``) the index
    maps every (rank, threadblock) to the accelerator ports of its circuit (schema 2)."""
    if not construction(plan).msccl:
        raise MscclError(f"plan {plan.instance}: stacked (circulant) plans are not exported to MSCCL yet")
    ports: dict[tuple[int, int], list[tuple[int, int]]] = {}
    if circuits is not None:
        differs = plan_mismatch(circuits.plan, plan)
        if not differs and len(circuits.nodes) != plan.world:
            differs = f"nodes: {len(circuits.nodes)} nodes, the plan has {plan.world} ranks"
        if differs:
            raise MscclError(f"{circuits_source}: {differs}")
        for x, node in enumerate(circuits.nodes):
            for np in node:
                ports.setdefault((x, np.peer), []).append((np.port, np.peer_port))
        for key in ports:
            ports[key].sort()
    files: dict[str, str] = {}
    demands: list[dict[str, Any]] = []
    total = sum(len(axis.demands) for mesh in plan.meshes for axis in mesh.axes)
    for mesh in plan.meshes:
        for i, axis in enumerate(mesh.axes):
            for k, d in enumerate(axis.demands):
                where = f"mesh {mesh.name} axis {i} demand {k} ({d.schedule})"
                if axis.ring:
                    raise MscclError(f"{where}: a ring axis leaves the cube; its ring is not exported to MSCCL")
                topo = demand_topology(d.groups, axis.bits, d.fold)
                program = build(d.schedule, topo, d.payload_bytes)
                verify(program, topo)
                name = f"{mesh.name}.{i}.{k}"
                tbs: list[list[tuple[int, int, int]]] = []
                try:
                    files[f"{name}.xml"] = program_xml(program, name, protocol=protocol, max_steps=max_steps,
                                                       channels=d.multiplicity, threadblocks=tbs)
                except MscclError as exc:
                    raise MscclError(f"{where}: {exc}") from None
                form = closed_form(d.schedule, topo)
                groups = [[base | expand(x, axis.bits) for x in range(topo.size)]
                          for base in coset_bases(axis.bits, plan.n)]
                wiring: dict[str, Any] = {}
                if circuits is not None:
                    wiring = {"accelerators": [[circuits.placement.accelerator[x] for x in group]
                                               for group in groups],
                              "ports": [_ports(group, tbs, ports, f"{circuits_source}: {where}") for group in groups]}
                demands.append({
                    "file": f"{name}.xml", "mesh": mesh.name, "axis": i, "demand": k,
                    "collective": d.collective, "schedule": d.schedule, "payload_bytes": d.payload_bytes,
                    "ranks": topo.size, "generators": sorted(topo.gens), "modulus": 0,
                    "chunk_bytes": str(program.unit / d.multiplicity), "h": form.h,
                    "v_bytes": str(form.v_factor * d.payload_bytes),
                    "multiplicity": d.multiplicity, "groups": groups, **wiring,
                })
                if progress is not None:
                    progress(len(demands), total)
    index = {"schema": INDEX_SCHEMAS[circuits is not None], "instance": plan.instance, "world": plan.world,
             "protocol": protocol, "max_steps": max_steps, "demands": demands}
    files[INDEX] = json.dumps(index, indent=1) + "\n"
    return files


def _ports(group: list[int], tbs: list[list[tuple[int, int, int]]],
           ports: dict[tuple[int, int], list[tuple[int, int]]], where: str) -> list[list[list[int]]]:
    """Per local rank, per threadblock id: [port, peer_port] of the circuit it drives (channel c on the
    c-th port, by number, of the rank's accelerator whose circuit reaches the peer), [-1, -1] for a
    threadblock of local copies."""
    out: list[list[list[int]]] = []
    for r, rank_tbs in enumerate(tbs):
        row: list[list[int]] = []
        for send, recv, chan in rank_tbs:
            peer = send if send != -1 else recv
            if peer == -1:
                row.append([-1, -1])
                continue
            x, y = group[r], group[peer]
            found = ports.get((x, y), [])
            if chan >= len(found):
                raise MscclError(f"{where}: nodes[{x}]: {len(found)} circuit(s) to rank {y}, channel {chan} "
                                 "needs one more")
            row.append(list(found[chan]))
        out.append(row)
    return out


def check_export(files: Mapping[str, str], source: str) -> dict[str, XmlCost]:
    """Check every XML an index lists (read only those); file name -> measured (h, v). Raises
    CheckError (PlanError for an index that is not JSON or nested too deep)."""
    if INDEX not in files:
        raise CheckError(f"{source}: no {INDEX}")
    index = read_json(files[INDEX], f"{source}/{INDEX}")
    _check_index(index, f"{source}/{INDEX}")
    try:
        out: dict[str, XmlCost] = {}
        for n, d in enumerate(index["demands"]):
            where = f"{source}/{INDEX}: demands[{n}]"
            name = d["file"]
            if name not in files:
                raise CheckError(f"{where}: file {name} missing")
            cost = check_xml(files[name], f"{source}/{name}", frozenset(d["generators"]), d["modulus"],
                             Fraction(d["chunk_bytes"]), protocol=index["protocol"], max_steps=index["max_steps"])
            if cost.h != d["h"] or cost.v != Fraction(d["v_bytes"]):
                raise CheckError(f"{source}/{name}: runs h={cost.h}, v={cost.v} bytes; the cost model "
                                 f"priced h={d['h']}, v={d['v_bytes']}")
            _check_groups(d, where, index["world"])
            out[name] = cost
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckError(f"{source}/{INDEX}: malformed ({type(exc).__name__}: {exc})") from None
    return out


MAX_FRACTION_CHARS = 64  # an exact number of bytes n or n/d in index.json (2^50 B payloads need 16 digits)


def _check_index(index: Mapping[str, Any], where: str) -> None:
    """``index.json`` held to its JSON Schema (``ocsplan schema export-index-1`` / ``-2``: types, no unknown
    key, file names without a directory, fractions n or n/d) and to the executor: ``max_steps`` within
    the int16 step index, each fraction at most MAX_FRACTION_CHARS characters."""
    from ..schemas import first_error

    schema = index.get("schema")
    if schema not in INDEX_SCHEMAS:
        raise CheckError(f"{where}: schema {str(schema)[:60]!r}, expected one of {', '.join(INDEX_SCHEMAS)}")
    for n, d in enumerate(index.get("demands", []) if isinstance(index.get("demands"), list) else []):
        for field in ("chunk_bytes", "v_bytes"):
            value = d.get(field) if isinstance(d, Mapping) else None
            if isinstance(value, str) and len(value) > MAX_FRACTION_CHARS:
                raise CheckError(f"{where}: demands[{n}].{field}: {len(value)} characters, the limit is "
                                 f"{MAX_FRACTION_CHARS}")
    error = first_error(index, f"export-index-{INDEX_SCHEMAS.index(schema) + 1}")
    if error is not None:
        raise CheckError(f"{where}: {error[0]}: {error[1]}")
    if index["max_steps"] > INT16:
        raise CheckError(f"{where}: max_steps: {index['max_steps']}, the executor's step index is an int16 "
                         f"(at most {INT16})")


def _check_groups(d: dict[str, Any], where: str, world: int) -> None:
    seen: set[int] = set()
    for g, group in enumerate(d["groups"]):
        if len(group) != d["ranks"]:
            raise CheckError(f"{where}: groups[{g}] has {len(group)} accelerators, not {d['ranks']}")
        if seen & set(group) or not all(0 <= a < world for a in group):
            raise CheckError(f"{where}: groups[{g}] repeats an accelerator or leaves the world of {world}")
        seen |= set(group)
    if len(seen) != world:
        raise CheckError(f"{where}: the groups cover {len(seen)} of {world} accelerators")


