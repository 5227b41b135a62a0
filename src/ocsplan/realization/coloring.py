"""Edge colorings for realization: color = port (paper App. A.1), König for the Clos.

A proper edge coloring gives no two edges at a node the same color. The
realizer colors what is not a Cayley graph of (Z2)^n (the ring of a
single-mesh deployment) with :func:`edge_coloring`, and routes the inter-rack
circuits of one rail through level 2 by :func:`bipartite_edge_coloring`
(König: a bipartite multigraph of maximum degree D needs exactly D colors) on
an orientation from :func:`balanced_orientation` (an Euler split).

Edges are ``(u, v)`` pairs of hashable nodes; parallel edges are allowed and
keep their own index. Colors are ``0 .. palette - 1``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence

__all__ = [
    "balanced_orientation",
    "bipartite_edge_coloring",
    "edge_coloring",
    "is_bipartite",
    "is_proper",
    "max_degree",
    "misra_gries",
]

Edge = tuple[Hashable, Hashable]


def max_degree(edges: Sequence[Edge]) -> int:
    """Largest number of edge ends at one node (0 for no edges)."""
    deg: Counter[Hashable] = Counter()
    for u, v in edges:
        deg[u] += 1
        deg[v] += 1
    return max(deg.values(), default=0)


def is_proper(edges: Sequence[Edge], colors: Sequence[int]) -> bool:
    """True when no node meets two edges of one color (and no edge is a loop)."""
    seen: set[tuple[Hashable, int]] = set()
    for (u, v), c in zip(edges, colors, strict=True):
        if u == v or c < 0 or (u, c) in seen or (v, c) in seen:
            return False
        seen.add((u, c))
        seen.add((v, c))
    return True


def is_bipartite(edges: Sequence[Edge]) -> bool:
    """Whether the multigraph has no odd cycle (a loop is one).

    Two-colors every component by breadth-first search; plain Python, so the
    realizer does not import networkx (a fifth of a second) to ask."""
    near: dict[Hashable, list[Hashable]] = {}
    for u, v in edges:
        if u == v:
            return False
        near.setdefault(u, []).append(v)
        near.setdefault(v, []).append(u)
    side: dict[Hashable, bool] = {}
    for root in near:
        if root in side:
            continue
        side[root] = False
        todo = [root]
        while todo:
            node = todo.pop()
            mine = side[node]
            for other in near[node]:
                seen = side.get(other)
                if seen is None:
                    side[other] = not mine
                    todo.append(other)
                elif seen == mine:
                    return False
    return True


def bipartite_edge_coloring(edges: Sequence[Edge], palette: int | None = None) -> list[int]:
    """Proper coloring of a bipartite multigraph with ``palette`` >= max degree colors.

    The alternating-path proof of König's theorem: to color u-v, take a color a
    free at u and b free at v; if a is taken at v, swap a and b along the a/b
    path from v, which cannot reach u in a bipartite graph. Raises ValueError
    on a loop, an odd cycle met on a path, or a palette below the max degree.
    """
    delta = max_degree(edges)
    size = delta if palette is None else palette
    if size < delta:
        raise ValueError(f"palette {size} below the maximum degree {delta}")
    at: dict[Hashable, list[int]] = {}
    for u, v in edges:
        if u == v:
            raise ValueError(f"loop at {u!r}")
        at.setdefault(u, [-1] * size)
        at.setdefault(v, [-1] * size)
    color = [-1] * len(edges)

    def other(f: int, node: Hashable) -> Hashable:
        a, b = edges[f]
        return b if a == node else a

    for e, (u, v) in enumerate(edges):
        at_u, at_v = at[u], at[v]
        a = at_u.index(-1)
        if at_v[a] != -1:
            b = at_v.index(-1)
            path, node, c = [], v, a
            while at[node][c] != -1:
                f = at[node][c]
                path.append(f)
                node = other(f, node)
                c = b if c == a else a
            if node == u:
                raise ValueError("not bipartite: an alternating path closed an odd cycle")
            for f in path:
                x, y = edges[f]
                at[x][color[f]] = -1
                at[y][color[f]] = -1
            for f in path:
                x, y = edges[f]
                color[f] = b if color[f] == a else a
                at[x][color[f]] = f
                at[y][color[f]] = f
        color[e] = a
        at_u[a] = e
        at_v[a] = e
    return color


def misra_gries(edges: Sequence[Edge]) -> list[int]:
    """Vizing coloring of a simple graph with at most max degree + 1 colors.

    Misra and Gries (1992): for each uncolored edge X-f build a maximal fan at
    X, invert a c/d path from X and rotate the fan. Raises ValueError on
    parallel edges or loops (use :func:`edge_coloring` for multigraphs).
    """
    size = max_degree(edges) + 1
    index: dict[frozenset[Hashable], int] = {}
    for e, (u, v) in enumerate(edges):
        key = frozenset((u, v))
        if u == v or key in index:
            raise ValueError("misra_gries needs a simple graph")
        index[key] = e
    color = [-1] * len(edges)
    at: dict[Hashable, dict[int, Hashable]] = {}  # node -> color -> neighbour
    neighbours: dict[Hashable, list[Hashable]] = {}
    for u, v in edges:
        at.setdefault(u, {})
        at.setdefault(v, {})
        neighbours.setdefault(u, []).append(v)
        neighbours.setdefault(v, []).append(u)

    def free(node: Hashable) -> int:
        used = at[node]
        return next(c for c in range(size) if c not in used)

    def is_free(node: Hashable, c: int) -> bool:
        return c not in at[node]

    def set_color(u: Hashable, v: Hashable, c: int) -> None:
        e = index[frozenset((u, v))]
        old = color[e]
        if old >= 0:
            del at[u][old]
            del at[v][old]
        color[e] = c
        if c >= 0:
            at[u][c] = v
            at[v][c] = u

    def edge_color(u: Hashable, v: Hashable) -> int:
        return color[index[frozenset((u, v))]]

    for x, f in edges:
        fan = [f]
        in_fan = {f}
        grown = True
        while grown:
            grown = False
            for w in neighbours[x]:
                c = edge_color(x, w)
                if w not in in_fan and c >= 0 and is_free(fan[-1], c):
                    fan.append(w)
                    in_fan.add(w)
                    grown = True
                    break
        c, d = free(x), free(fan[-1])
        # invert the c/d path starting at x (x misses c, so it starts with d)
        path, node, want = [], x, d
        while want in at[node]:
            nxt = at[node][want]
            path.append((node, nxt, want))
            node, want = nxt, (c if want == d else d)
        for u, v, _ in path:
            set_color(u, v, -1)
        for u, v, was in path:
            set_color(u, v, c if was == d else d)
        # a prefix of the fan that is still a fan and ends where d is free
        w_at = -1
        for i, w in enumerate(fan):
            if i and not is_free(fan[i - 1], edge_color(x, w)):
                break
            if is_free(w, d):
                w_at = i
                break
        if w_at < 0:  # pragma: no cover - excluded by the Misra-Gries lemma
            raise AssertionError("no fan prefix ends at a node missing d")
        shifted = [edge_color(x, fan[i + 1]) for i in range(w_at)]
        for i in range(1, w_at + 1):
            set_color(x, fan[i], -1)
        for i in range(w_at):
            set_color(x, fan[i], shifted[i])
        set_color(x, fan[w_at], d)
    return color


def edge_coloring(edges: Sequence[Edge]) -> list[int]:
    """A proper edge coloring of any loopless multigraph, as few colors as we can prove.

    Bipartite: König, exactly max degree colors. Simple: Misra-Gries, at most
    max degree + 1 (Vizing). Otherwise DSATUR on the line graph (networkx),
    which may need more (Shannon's bound is 3/2 max degree).
    """
    import networkx as nx  # imported on use: it is slow to import

    if any(u == v for u, v in edges):
        raise ValueError("loops cannot be colored")
    if is_bipartite(edges):
        return bipartite_edge_coloring(edges)
    if len({frozenset(e) for e in edges}) == len(edges):
        return misra_gries(edges)
    graph: nx.MultiGraph = nx.MultiGraph()
    for e, (u, v) in enumerate(edges):
        graph.add_edge(u, v, key=e)
    line = nx.line_graph(graph)
    found = nx.greedy_color(line, strategy="DSATUR")
    return [int(found[(u, v, e)] if (u, v, e) in found else found[(v, u, e)]) for e, (u, v) in enumerate(edges)]


def balanced_orientation(edges: Sequence[Edge]) -> list[bool]:
    """Orient every edge so that in- and out-degree differ by at most one at each node.

    ``True`` keeps ``u -> v``. An Euler circuit of each component, after odd
    nodes are joined to one extra node, enters and leaves every node equally often.
    """
    import networkx as nx  # imported on use: it is slow to import

    graph: nx.MultiGraph = nx.MultiGraph()
    for e, (u, v) in enumerate(edges):
        graph.add_edge(("n", u), ("n", v), key=e)
    odd = sorted((node for node, deg in graph.degree() if deg % 2), key=repr)
    for i, node in enumerate(odd):
        graph.add_edge(("extra",), node, key=-1 - i)
    keep = [True] * len(edges)
    for component in sorted(nx.connected_components(graph), key=lambda c: min(map(repr, c))):
        sub = graph.subgraph(component)
        start = min(component, key=repr)
        for u, _v, key in nx.eulerian_circuit(sub, source=start, keys=True):
            if key >= 0:
                keep[key] = edges[key][0] == u[1]
    return keep
