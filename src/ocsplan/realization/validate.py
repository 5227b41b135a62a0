"""The independent validator of circuit files (``ocsplan validate``).

Written apart from :mod:`ocsplan.realize`: it shares only the data classes and
the reader of :mod:`ocsplan.circuits` and re-derives everything else, including
the fabric's cabling (README "Fabric files": rail k of accelerator a enters
port ``a % domain`` of level-1 device ``a // domain``; uplink ``down + i*fanout + j``
of group r is port ``r*fanout + j`` of level-2 device i) and the ring's Gray
order. It checks that each node port is used at most once; every circuit
joins x and x XOR g (a ring neighbour for a ring); the multiplicities and the
port budget; every cross-connect is a matching, carries exactly one circuit
and, walked cable by cable, leads each circuit from its node port to its
peer's along the recorded path; every routing table entry rides a circuit to
its peer; and, given the plan, that every transfer of every schedule has a
circuit (:mod:`.plan_check`). Each fault names node and port where one is known
(:mod:`.fault`).
"""

from __future__ import annotations

import itertools
import operator
from collections import Counter
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from ..cayley import compress, expand, mask_of
from ..gcpause import paused_gc
from ..plan import CIRCULANT as CIRCULANT_KIND
from ..plan import CUBE, FOLD, RING, Plan, generator_kind
from .circuits import CIRCULANT, Circuits, Device, Route, parse_circulant, parse_label, shift
from .fault import Fault, FaultLog
from .plan_check import against_plan

__all__ = ["PEERS", "Fault", "validate"]


def _ring_neighbours(mask: int, x: int) -> tuple[int, int]:
    """(next, previous) of x on the Gray-code ring over the bits of ``mask``."""
    bits = [b for b in range(mask.bit_length()) if mask >> b & 1]
    local = compress(x & mask, bits)
    pos, shift = local, local >> 1
    while shift:  # inverse Gray code: prefix XOR
        pos ^= shift
        shift >>= 1
    size = 1 << len(bits)
    base = x & ~mask

    def at(p: int) -> int:
        p %= size
        return base | expand(p ^ (p >> 1), bits)

    return at(pos + 1), at(pos - 1)


class _Checker(FaultLog):
    """The checks of the file alone; one instance per validation run."""

    def __init__(self, c: Circuits) -> None:
        super().__init__(c)
        self.kinds: dict[str, tuple[int, str, int]] = {}  # label -> (mask, kind, multiplicity)
        self.port_owner: dict[int, str] = {}
        self.peer_at: dict[tuple[int, int], tuple[int, int, str]] = {}  # from the circuits list
        self.cross: dict[str, dict[int, int]] = {}  # device -> port -> partner
        self._ids: dict[tuple[int, int, int], str] = {}  # (level, rail, index) -> device id
        # a stacked plan's circuit file: circulant sets on row-major ranks, any world
        self.stacked = any(label.startswith(CIRCULANT) for label, _ in c.plan.generators)

    # -- header, generators, node table, circuits ------------------------------------

    def header(self) -> bool:
        c, f = self.c, self.c.fabric
        ok = True
        if self.world < 2 or (self.world & (self.world - 1) and not self.stacked):
            self.fault(f"plan world {self.world} is not a power of two")
            return False
        for i, level in enumerate(f.levels):
            if level.technology != "ocs":
                self.fault(f"fabric level {i + 1} is {level.technology}, not ocs")
                ok = False
        if len(c.placement.accelerator) != self.world:
            self.fault(f"placement lists {len(c.placement.accelerator)} accelerators for {self.world} nodes")
            return False
        seen: dict[int, int] = {}
        # a repaired placement (ocsplan repair) may use the spares beyond the serving racks
        repaired = c.placement.method == "repaired"
        serving = f.accelerators if repaired else f.serving_racks * f.rack_size
        for x, a in enumerate(c.placement.accelerator):
            if not 0 <= a < serving:
                self.fault(f"placed on accelerator {a}, outside the {serving} "
                           f"{'installed' if repaired else 'serving'} accelerators", x)
                ok = False
            elif a in seen:
                self.fault(f"placed on accelerator {a} like node {seen[a]}", x)
                ok = False
            seen[a] = x
        if len(c.nodes) != self.world:
            self.fault(f"node table has {len(c.nodes)} nodes for {self.world}")
            ok = False
        if c.ports_used > f.ports:
            self.fault(f"{c.ports_used} ports used per node, fabric has {f.ports}")
        two = len(f.levels) == 2
        if two and (f.up != f.spines * f.fanout or f.groups * f.fanout > f.levels[1].down
                    or f.domain > f.down or f.down + f.up > f.levels[0].radix):
            self.fault("fabric wiring numbers are inconsistent with its levels")
            ok = False
        return ok

    def generators(self) -> None:
        c = self.c
        total = 0
        for g in c.generators:
            try:
                mask, kind = parse_label(g.label)
                if kind == CIRCULANT_KIND:
                    size, stride, _ = parse_circulant(g.label)
                    if self.world % (size * stride):
                        self.fault(f"generator {g.label}: an axis of {size} with stride {stride} does not "
                                   f"divide the world {self.world}")
                        continue
            except ValueError:
                self.fault(f"generator {g.label!r} is not a mask")
                continue
            if kind != CIRCULANT_KIND and (mask <= 0 or mask >> self.n):
                self.fault(f"generator {g.label} is not a mask on {self.n} bits")
            self.kinds[g.label] = (mask, kind, g.multiplicity)
            want = g.multiplicity * generator_kind(kind).ports_per_circuit
            if len(g.ports) < want:
                self.fault(f"generator {g.label} has {len(g.ports)} ports for multiplicity {g.multiplicity}")
            for port in g.ports:
                if port in self.port_owner:
                    self.fault(f"port index {port} given to {self.port_owner[port]} and {g.label}")
                if not 0 <= port < c.fabric.ports:
                    self.fault(f"generator {g.label}: port {port} outside 0..{c.fabric.ports - 1}")
                self.port_owner[port] = g.label
            total += len(g.ports)
        if total != c.ports_used:
            self.fault(f"generators take {total} ports, file says {c.ports_used} ports used")

    def _peer_ok(self, label: str, x: int, y: int) -> bool:
        mask, kind, _ = self.kinds[label]
        return y in PEERS[kind](label, mask, x)

    def circuits(self) -> None:
        ports, world, peer_at, owner_of = self.c.fabric.ports, self.world, self.peer_at, self.port_owner
        xor_of = {label: mask for label, (mask, kind, _) in self.kinds.items() if generator_kind(kind).host}
        for circ in self.c.circuits:
            a, ap, b, bp, gen = circ.a, circ.a_port, circ.b, circ.b_port, circ.generator
            if not (0 <= a < world and 0 <= b < world and 0 <= ap < ports and 0 <= bp < ports):
                for x, p, y in ((a, ap, b), (b, bp, a)):
                    if not 0 <= x < world:
                        self.fault(f"circuit end outside 0..{world - 1}", x, p)
                    elif not 0 <= p < ports:
                        self.fault(f"port outside 0..{ports - 1} (circuit to node {y})", x, p)
                continue
            if a == b:
                self.fault("circuit joins the node to itself", a, ap)
                continue
            if gen not in self.kinds:
                self.fault(f"circuit to node {b} has unknown generator {gen}", a, ap)
            elif not (b == a ^ xor_of[gen] if gen in xor_of else self._peer_ok(gen, a, b)):
                mask, kind, _ = self.kinds[gen]
                want = generator_kind(kind).peer.format(peer=a ^ mask)
                self.fault(f"wrong peer: generator {gen} joins node {b}, expected {want}", a, ap)
            for x, p, y, q in ((a, ap, b, bp), (b, bp, a, ap)):
                if (x, p) in peer_at:
                    self.fault(f"port used twice: circuits to node {peer_at[(x, p)][0]} and to node {y}", x, p)
                else:
                    peer_at[(x, p)] = (y, q, gen)
                owner = owner_of.get(p)
                if owner is not None and owner != gen:
                    self.fault(f"circuit of generator {gen} on a port of {owner}", x, p)
        for x, node in enumerate(self.c.nodes[:world]):
            listed = set()
            for e in node:
                if e.port in listed:
                    self.fault("port used twice in the node table", x, e.port)
                listed.add(e.port)
                got = peer_at.get((x, e.port))
                if got != (e.peer, e.peer_port, e.generator):
                    what = "no circuit" if got is None else f"the circuit to node {got[0]} port {got[1]}"
                    self.fault(f"node table says node {e.peer} port {e.peer_port} ({e.generator}), "
                               f"circuits list has {what}", x, e.port)
        table = {(x, e.port) for x, node in enumerate(self.c.nodes) for e in node}
        for x, p in sorted(key for key in peer_at if key not in table):
            self.fault(f"circuit to node {peer_at[(x, p)][0]} missing from the node table", x, p)

    def scopes(self) -> None:
        """Each circuit's scope and each generator's circuit counts and scope, re-derived."""
        two = len(self.c.fabric.levels) == 2
        for circ in self.c.circuits:
            want = "single-level" if not two else "inter-rack" if len(circ.path) == 3 else "intra-rack"
            if circ.scope != want or len(circ.path) not in ((1, 3) if two else (1,)):
                self.fault(f"circuit to node {circ.b}: scope {circ.scope} with {len(circ.path)} OCS hop(s)",
                           circ.a, circ.a_port)
        total: Counter[str] = Counter(circ.generator for circ in self.c.circuits)
        crossing: Counter[str] = Counter(circ.generator for circ in self.c.circuits if len(circ.path) == 3)
        labels = [g.label for g in self.c.generators]
        for label in sorted({x for x in labels if labels.count(x) > 1}):
            self.fault(f"generator {label} listed twice")
        for g in self.c.generators:
            t, x = total[g.label], crossing[g.label]
            scope = ("single-level" if not two else "inter-rack" if x == t
                     else "intra-rack" if x == 0 else "mixed")
            if (g.circuits, g.inter_rack, g.scope) != (t, x, scope):
                self.fault(f"generator {g.label}: file says {g.circuits} circuits, {g.inter_rack} inter-rack, "
                           f"{g.scope}; the circuits give {t}, {x}, {scope}")

    def placement(self) -> None:
        """The placement method and slot bits re-derive the accelerator list."""
        pl, f, n = self.c.placement, self.c.fabric, self.n
        if pl.method == "repaired":
            return  # the accelerator list is the record (checked distinct and installed above)
        if pl.method == "contiguous" and pl.slot_bits is None:
            want = tuple(range(self.world))
        elif pl.method == "bits" and pl.slot_bits is not None and all(0 <= b < n for b in pl.slot_bits) \
                and len(set(pl.slot_bits)) == len(pl.slot_bits) and tuple(sorted(pl.slot_bits, reverse=True)) \
                == pl.slot_bits:
            slot = sorted(pl.slot_bits)
            inside = mask_of(slot)
            rest = [b for b in range(n) if not inside >> b & 1]
            want = tuple(compress(x & ~inside, rest) * f.domain + compress(x & inside, slot)
                         for x in range(self.world))
        else:
            self.fault(f"placement {pl.method!r} with slot bits {pl.slot_bits} is not a placement")
            return
        if want != pl.accelerator:
            self.fault(f"placement {pl.method} does not give the listed accelerators")

    def _dup_devices(self) -> set[str]:
        ids = Counter(d.id for d in self.c.devices)
        return {i for i, k in ids.items() if k > 1}

    def _device_fields(self, d: Device) -> None:
        f = self.c.fabric
        two = len(f.levels) == 2
        want_id = f"L{d.level}.k{d.rail:02d}.{'r' if two and d.level == 1 else 'd'}{d.index:02d}"
        radix = f.levels[d.level - 1].radix if 1 <= d.level <= len(f.levels) else None
        if d.id != want_id or d.radix != radix or not 0 <= d.rail < f.ports:
            self.fault(f"level {d.level}, rail {d.rail}, index {d.index}, radix {d.radix} do not match the "
                       f"device id and fabric (expected {want_id}, radix {radix})", None, None, d.id)

    def multiplicities(self) -> None:
        """Each generator joins every node to its neighbours by its multiplicity of circuits: on
        arrays for a mask (x ^ mask, one count per lower node), node by node for the others."""
        circuits, world = self.c.circuits, self.world
        fast = {label for label, (mask, kind, _) in self.kinds.items()
                if PEERS[kind] is _xor_peers and 0 < mask < world}
        count: Counter[tuple[str, int, int]] = Counter()
        if len(fast) < len(self.kinds):
            for circ in circuits:
                count[(circ.generator, min(circ.a, circ.b), max(circ.a, circ.b))] += 1
        if fast:
            index = {label: i for i, label in enumerate(self.kinds)}
            a = np.fromiter(map(operator.attrgetter("a"), circuits), np.int64, len(circuits))
            b = np.fromiter(map(operator.attrgetter("b"), circuits), np.int64, len(circuits))
            gen = np.fromiter(map(index.get, map(operator.attrgetter("generator"), circuits),
                                  itertools.repeat(-1)), np.int64, len(circuits))
            lo, hi = np.minimum(a, b), np.maximum(a, b)
            inside = (lo >= 0) & (hi < world)
        for label, (mask, kind, mult) in self.kinds.items():
            port = next((g.ports[0] for g in self.c.generators if g.label == label and g.ports), None)
            peers, per_circuit = PEERS[kind], generator_kind(kind).ports_per_circuit
            if label in fast:
                want = mult * per_circuit
                mine = inside & (gen == index[label]) & (hi == lo ^ mask)
                times = np.bincount(lo[mine], minlength=world)
                nodes = np.arange(world, dtype=np.int64)
                short = np.flatnonzero((nodes < nodes ^ mask) & (times != want))  # each pair at its lower node
                for node, got in zip(short.tolist(), times[short].tolist(), strict=True):
                    self.fault(f"generator {label} joins it to node {node ^ mask} by {got} circuit(s), "
                               f"multiplicity asks {want}", node, port)
                continue
            for x in range(self.world):
                # x -> y; the pair of the other neighbour is counted at it, unless both are one node
                # (x ^ mask, a ring of two: a double edge, a circulant's s = N/2: one matching)
                y, prev = peers(label, mask, x)
                if y == prev and x > y:
                    continue
                want = mult * per_circuit if y == prev else mult
                have = count[(label, min(x, y), max(x, y))]
                if have != want:
                    self.fault(f"generator {label} joins it to node {y} by {have} circuit(s), "
                               f"multiplicity asks {want}", x, port)

    # -- devices: matching, cabling, end-to-end walk ------------------------------------

    def devices(self) -> None:
        c, f = self.c, self.c.fabric
        two = len(f.levels) == 2
        rank_at = {a: x for x, a in enumerate(c.placement.accelerator)}
        twice = self._dup_devices()
        matchings = True  # every device a matching of distinct ports in its radix, under an id of its own
        for d in c.devices:
            radix = f.levels[d.level - 1].radix if 1 <= d.level <= len(f.levels) else 0
            fresh = d.id not in self.cross
            table = self.cross.setdefault(d.id, {})
            self._device_fields(d)
            if fresh and _matching(d.cross_connects, radix):  # none of the faults below can arise
                table.update(d.cross_connects)
                table.update(zip(map(operator.itemgetter(1), d.cross_connects),
                                 map(operator.itemgetter(0), d.cross_connects), strict=True))
                if d.id in twice:
                    self.fault("device listed twice", None, None, d.id)
                continue
            matchings = False
            listed = Counter((min(p, q), max(p, q)) for p, q in d.cross_connects)
            for (p, q), times in sorted(listed.items()):
                if times > 1:
                    self._device_fault(d.id, p, f"cross-connect [{p}, {q}] listed {times} times", rank_at)
            if d.id in twice:
                self.fault("device listed twice", None, None, d.id)
            for p, q in d.cross_connects:
                for port, other in ((p, q), (q, p)):
                    if not 0 <= port < radix:
                        self._device_fault(d.id, port, f"port outside the radix {radix}", rank_at)
                    elif port == other:
                        self._device_fault(d.id, port, "cross-connected to itself", rank_at)
                    elif port in table and table[port] != other:
                        self._device_fault(d.id, port, f"not a matching: cross-connected to ports {table[port]} "
                                           f"and {other}", rank_at)
                    else:
                        table[port] = other
        used: Counter[tuple[str, int, int]] = Counter()
        for circ in c.circuits:
            if (circ.a, circ.a_port) not in self.peer_at or not 0 <= circ.b < self.world:
                continue
            hops = self._walk(circ.a, circ.a_port, rank_at, two)
            if hops is None:
                continue
            walked, end = hops
            for dev, p, q in walked:
                used[(dev, p, q) if p < q else (dev, q, p)] += 1
            if end != (circ.b, circ.b_port):
                got = "nowhere" if end is None else f"node {end[0]} port {end[1]}"
                self.fault(f"circuit to node {circ.b} port {circ.b_port} arrives at {got} through the "
                           "cross-connects", circ.a, circ.a_port)
            elif walked != [(h.device, h.enter, h.leave) for h in circ.path]:
                self.fault(f"recorded path to node {circ.b} differs from the cross-connects "
                           f"({len(circ.path)} hops recorded, {len(walked)} walked)", circ.a, circ.a_port)
        if matchings and len(used) == sum(len(d.cross_connects) for d in c.devices) \
                and max(used.values(), default=0) <= 1:
            # each walked hop is a listed cross-connect (the tables are the listed matchings), so
            # as many distinct ones as are listed, each once, is every cross-connect carrying one
            return
        for d in c.devices:
            for p, q in d.cross_connects:
                key = (d.id, min(p, q), max(p, q))
                if used[key] > 1:
                    self._device_fault(d.id, p, f"cross-connect [{p}, {q}] carries {used[key]} circuits", rank_at)
                elif used[key] == 0 and self.cross.get(d.id, {}).get(p) == q:
                    self._device_fault(d.id, p, f"cross-connect [{p}, {q}] carries no circuit", rank_at)

    def _device_fault(self, device: str, port: int, message: str, rank_at: dict[int, int]) -> None:
        """Name the node behind a level-1 down port when there is one."""
        f = self.c.fabric
        try:
            level, rail, group = int(device[1]), int(device[4:6]), int(device[8:])
        except (ValueError, IndexError):
            level, rail, group = 0, 0, 0
        if level == 1 and 0 <= port < f.domain and group * f.domain + port in rank_at:
            node = rank_at[group * f.domain + port]
            self.fault(f"device {device} port {port}: {message}", node, rail)
        else:
            self.fault(message, None, port, device)

    def _id(self, level: int, rail: int, index: int, two: bool) -> str:
        """A device's id (README "Fabric files"), remembered."""
        key = (level, rail, index)
        if key not in self._ids:
            self._ids[key] = f"L{level}.k{rail:02d}.{'r' if two and level == 1 else 'd'}{index:02d}"
        return self._ids[key]

    def _walk(self, x: int, k: int, rank_at: dict[int, int], two: bool
              ) -> tuple[list[tuple[str, int, int]], tuple[int, int] | None] | None:
        """Follow node x's port k through cables and cross-connects to the far node."""
        f, cross, ids = self.c.fabric, self.cross, self._ids
        acc = self.c.placement.accelerator[x]
        group, port = divmod(acc, f.domain)
        dev = ids.get((1, k, group)) or self._id(1, k, group, two)
        walked: list[tuple[str, int, int]] = []
        for _ in range(3):
            table = cross.get(dev)
            partner = None if table is None else table.get(port)
            if partner is None:
                self.fault(f"device {dev} port {port} has no cross-connect on the way", x, k)
                return walked, None
            walked.append((dev, port, partner))
            if dev.startswith("L1"):
                if partner < f.domain:
                    far = rank_at.get(group * f.domain + partner)
                    return walked, None if far is None else (far, k)
                up = partner - f.down
                if not two or not 0 <= up < f.up:
                    self.fault(f"device {dev} port {partner} is not cabled", x, k)
                    return walked, None
                spine, j = divmod(up, f.fanout)
                dev, port = ids.get((2, k, spine)) or self._id(2, k, spine, two), group * f.fanout + j
            else:
                group, j = divmod(partner, f.fanout)
                spine = int(dev[8:])
                if group >= f.groups:
                    self.fault(f"device {dev} port {partner} is not cabled", x, k)
                    return walked, None
                dev, port = ids.get((1, k, group)) or self._id(1, k, group, two), f.down + spine * f.fanout + j
        self.fault("path does not return to an accelerator within three devices", x, k)
        return walked, None

    # -- routing tables, counts --------------------------------------------------------

    def routes(self) -> None:
        if not self.c.routes:
            return
        peer_of: list[dict[int, int]] = []  # node -> port -> peer, made for the first table with a fault
        grid = np.full((self.world, max(self.c.fabric.ports, 1)), -1, dtype=np.int64)  # node, port -> peer
        ends = len(self.peer_at)
        grid[np.fromiter(map(operator.itemgetter(0), self.peer_at), np.int64, ends),
             np.fromiter(map(operator.itemgetter(1), self.peer_at), np.int64, ends)] = np.fromiter(
            map(operator.itemgetter(0), self.peer_at.values()), np.int64, ends)
        for r in self.c.routes:
            name = f"{r.schedule} (mesh {r.mesh} axis {r.axis} demand {r.demand})"
            if len(r.table) != self.world:
                self.fault(f"routing table of {name} has {len(r.table)} nodes")
                continue
            if _routes_ride(r, grid):
                continue
            if not peer_of:
                peer_of = [{} for _ in range(self.world)]
                for (x, p), (y, _, _) in self.peer_at.items():
                    peer_of[x][p] = y
            distinct: dict[tuple[int, ...], bool] = {}  # ports -> distinct and as many as the multiplicity
            for x, phases in enumerate(r.table):
                row = peer_of[x]
                for ph, sends in enumerate(phases):
                    for peer, ports in sends:
                        ok = distinct.get(ports)
                        if ok is None:
                            ok = distinct[ports] = len(set(ports)) == len(ports) == r.multiplicity
                        if not ok:
                            if len(set(ports)) != len(ports):
                                self.fault(f"{name} phase {ph}: a port listed twice to node {peer}", x)
                            if len(set(ports)) != r.multiplicity:
                                self.fault(f"{name} phase {ph}: {len(set(ports))} distinct port(s) to node "
                                           f"{peer}, multiplicity {r.multiplicity}", x)
                        for p in ports:
                            if row.get(p) != peer:
                                got = row.get(p)
                                what = "no circuit" if got is None else f"a circuit to node {got}"
                                self.fault(f"{name} phase {ph} sends to node {peer} on this port, which has {what}",
                                           x, p)

    def counts(self) -> None:
        c, k = self.c, self.c.counts
        crossing = sum(1 for circ in c.circuits if len(circ.path) == 3)
        total = len(c.circuits)
        if (k.circuits, k.inter_rack, k.intra_rack) != (total, crossing, total - crossing):
            self.fault(f"counts say {k.circuits} circuits ({k.inter_rack} inter-rack), the file has "
                       f"{len(c.circuits)} ({crossing})")
        if (k.nodes, k.ports_per_node) != (self.world, c.ports_used):
            self.fault(f"counts say {k.nodes} nodes, {k.ports_per_node} ports per node; the file has "
                       f"{self.world}, {c.ports_used}")
        if c.plan.ports_used + c.reserved_ports != c.ports_used:
            self.fault(f"plan ports {c.plan.ports_used} + {c.reserved_ports} reserved != {c.ports_used} ports used")
        if tuple(c.plan.generators) != tuple((g.label, g.multiplicity) for g in c.generators):
            self.fault("the plan's generators differ from the generator table")
        used = k.used
        want_levels = []
        for level in range(1, len(c.fabric.levels) + 1):
            mine = [d for d in c.devices if d.level == level]
            ports = 2 * sum(len(d.cross_connects) for d in mine)
            if level == 1:
                logical, below = len(mine), 2 * total
            else:
                rail_of = {d.id: d.rail for d in c.devices}
                three = [circ for circ in c.circuits if len(circ.path) == 3]
                logical = len({(rail_of.get(x.path[0].device), x.path[0].leave) for x in three}
                              | {(rail_of.get(x.path[2].device), x.path[2].enter) for x in three})
                below = 2 * crossing
            want_levels.append((level, c.fabric.levels[level - 1].technology, len(mine), ports, logical, below,
                                "fiber"))
        got_levels = [(lv.level, lv.technology, lv.devices, lv.ports, lv.logical, lv.links_below, lv.medium)
                      for lv in used.levels]
        if (used.accelerators, used.accelerator_ports, got_levels) != (self.world, 2 * total, want_levels):
            self.fault("counts.used differ from the circuits and devices (accelerators, accelerator ports "
                       "or per-level devices, ports, logical switches, links)")


def _matching(pairs: tuple[tuple[int, int], ...], radix: int) -> bool:
    """Whether a device's cross-connects are pairs of distinct ports, no port twice, all in
    ``range(radix)``: then :meth:`_Checker.devices` has no fault of its own cross-connects to report."""
    ports = list(itertools.chain.from_iterable(pairs))
    return len(ports) == 2 * len(pairs) and len(set(ports)) == len(ports) \
        and (not ports or (min(ports) >= 0 and max(ports) < radix))


def _routes_ride(r: Route, grid: npt.NDArray[np.int64]) -> bool:
    """Whether every entry of ``r``'s table has distinct ports, as many as its multiplicity,
    each on a circuit to its peer (``grid[node, port]``), checked on arrays one port column at
    a time: then :meth:`_Checker.routes` has no fault to report for it."""
    rows = list(itertools.chain.from_iterable(r.table))  # (node, phase) -> ((peer, ports), ...)
    count = np.fromiter(map(len, rows), np.int64, len(rows))
    total, m = int(count.sum()), r.multiplicity
    if not total:
        return True
    if any(len(set(ports)) != len(ports) or len(ports) != m
           for ports in set(map(operator.itemgetter(1), itertools.chain.from_iterable(rows)))):
        return False
    if m == 0:
        return True
    per_row = np.repeat(np.arange(len(r.table)), np.fromiter(map(len, r.table), np.int64, len(r.table)))
    node = np.repeat(per_row, count)
    peer = np.fromiter(map(operator.itemgetter(0), itertools.chain.from_iterable(rows)), np.int64, total)
    if peer.min() < 0:
        return False
    for j in range(m):
        ports = map(operator.itemgetter(1), itertools.chain.from_iterable(rows))
        port = np.fromiter(map(operator.itemgetter(j), ports), np.int64, total)
        if port.min() < 0 or port.max() >= grid.shape[1] or not np.array_equal(grid[node, port], peer):
            return False
    return True


def _peers(label: str, x: int) -> tuple[int, int]:
    """(x + s, x - s) on the axis of a circulant label."""
    size, stride, s = parse_circulant(label)
    return shift(x, size, stride, s), shift(x, size, stride, -s)


def _xor_peers(label: str, mask: int, x: int) -> tuple[int, int]:
    return x ^ mask, x ^ mask


# the two neighbours (next, previous) a circuit of each generator kind joins x to, from its label and mask
PEERS: dict[str, Callable[[str, int, int], tuple[int, int]]] = {
    CUBE: _xor_peers,
    FOLD: _xor_peers,
    RING: lambda label, mask, x: _ring_neighbours(mask, x),
    CIRCULANT_KIND: lambda label, mask, x: _peers(label, x),
}


def validate(circuits: Circuits, plan: Plan | None = None,
             progress: Callable[[int, int], None] | None = None) -> list[Fault]:
    """Every fault of a circuit file (empty: valid); with ``plan``, also schedule coverage
    and every plan field the file restates (:mod:`.fabric_check` compares the fabric fields).
    ``progress(done, total)`` after each of its checks."""
    with paused_gc():  # the checks' indexes: millions of small acyclic objects at N = 65536
        return _validate(circuits, plan, progress)


def _validate(circuits: Circuits, plan: Plan | None, progress: Callable[[int, int], None] | None) -> list[Fault]:
    check = _Checker(circuits)
    if not check.header():
        return check.faults
    stages: list[Callable[[], None]] = [check.placement, check.generators, check.circuits, check.scopes,
                                        check.multiplicities, check.devices, check.routes, check.counts]
    if plan is not None:
        stages.append(lambda: against_plan(check, plan))
    for done, stage in enumerate(stages, 1):
        stage()
        if progress is not None:
            progress(done, len(stages))
    return check.faults
