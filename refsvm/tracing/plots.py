"""Figures of a trace (matplotlib, an optional dependency): the decision function and its
margins after chosen steps with the support vectors marked by set (2-D data); the α paths
of an IDSVM increment or a POKER path against the path parameter, breakpoints marked;
StreamSVM's ball radius against the examples with 3/2 of the optimal radius; and an
animation (GIF) of the decision function learned example by example.

The models drawn are the reference's own: the decision function after example k is the
reference state's ``decision_function`` after learning the first k examples (the same
code, untraced), and the sets and α values are those the trace recorded.
"""

from __future__ import annotations

import os

import numpy as np

from ..core.trace import Tracer

__all__ = ["alpha_path_figure", "animation", "decision_figure", "plot_run", "radius_figure"]

_SET_STYLE = {  # set name -> (marker, face colour)
    "S": ("o", "none"), "E": ("s", "none"), "R": (".", None),
    "I_s": ("o", "none"), "I_c": ("s", "none"), "I_o": (".", None),
    "SV in V": ("o", "none"), "V, alpha = 0": ("^", "none"), "not in V": (".", None),
    "updated on": ("o", "none"), "passive": (".", None),
    "core set (line 7)": ("o", "none"), "inside the ball": (".", None),
}


def _plt():
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def model_after(run, k):
    """The reference's state after the first ``k`` examples of the run's stream (an
    untraced run of the same algorithm on the prefix)."""
    algo = run.algorithm
    X, y = run.X[:k], run.y[:k]
    state = algo.make(run.X.shape[1], run.X)
    algo.drive(state, X, y, Tracer())
    return state


def _decision(state, algo, grid):
    if algo.model == "poker":
        return state.decision_function(grid)
    return np.asarray(state.decision_function(grid), dtype=float)


def sets_after(run, k):
    """The stream positions of each set after the first ``k`` examples, as the trace
    recorded them (IDSVM: S, E, R; POKER: I_s, I_c, I_o; the ramp: the SVs in V, the rest
    of V, the others; the others: the examples that changed the model)."""
    algo = run.algorithm
    before = [s for s in run.steps if isinstance(s.example, (int, np.integer)) and s.example < k]
    last = next((s for s in reversed(before) if s.check), None)
    if algo.model in ("idsvm", "poker") and last is not None:
        names = ("S", "E", "R") if algo.model == "idsvm" else ("I_s", "I_c", "I_o")
        return {n: list(last.check[n]) for n in names}
    if algo.model == "ramp" and last is not None:
        ids, alpha = last.check["ids"], last.check["alpha"]
        V = set(last.check["V"])
        sv = [int(i) for i, a in zip(ids, alpha) if a > 0 and i in V]
        return {"SV in V": sv, "V, alpha = 0": sorted(V - set(sv)),
                "not in V": [int(i) for i in ids if i not in V]}
    if algo.model == "stream":
        moved = {s.example for s in before if s.line in ("Alg. 1 line 7", "Alg. 1 line 3")}
        return {"core set (line 7)": sorted(moved),
                "inside the ball": [i for i in range(k) if i not in moved]}
    moved = {s.example for s in before if s.line.endswith("update") or s.line.endswith("line 6")}
    return {"updated on": sorted(moved), "passive": [i for i in range(k) if i not in moved]}


def _panel(ax, run, k, grid_n=60):
    algo = run.algorithm
    X, y = run.X, run.y
    lo, hi = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], grid_n), np.linspace(lo[1], hi[1], grid_n))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    f = _decision(model_after(run, k), algo, grid).reshape(gx.shape)
    ax.contourf(gx, gy, f, levels=20, cmap="RdBu_r", alpha=0.35)
    ax.contour(gx, gy, f, levels=[-1.0, 0.0, 1.0], colors="k",
               linestyles=["--", "-", "--"], linewidths=[0.8, 1.4, 0.8])
    seen = np.arange(k)
    ax.scatter(X[k:, 0], X[k:, 1], c="lightgrey", s=8)
    colours = np.where(y[seen] > 0, "tab:red", "tab:blue")
    for name, members in sets_after(run, k).items():
        members = [m for m in members if m < k]
        if not members:
            continue
        marker, face = _SET_STYLE.get(name, ("o", None))
        c = colours[members]
        if face == "none":
            ax.scatter(X[members, 0], X[members, 1], marker=marker, facecolors="none",
                       edgecolors=c, s=60, linewidths=1.4, label=name)
        else:
            ax.scatter(X[members, 0], X[members, 1], marker=marker, c=c, s=25, label=name)
    ax.set_title(f"after {k} examples", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def decision_figure(run, ks=None, path=None):
    """The decision function f = 0 (solid) and the margins f = ±1 (dashed) after the
    examples ``ks`` (default: a quarter, half, three quarters, all), the examples seen
    coloured by class and marked by set; the later ones grey."""
    plt = _plt()
    n = run.X.shape[0]
    if ks is None:
        ks = sorted({max(2, n // 4), max(2, n // 2), max(2, 3 * n // 4), n})
    fig, axes = plt.subplots(1, len(ks), figsize=(3.2 * len(ks), 3.4), squeeze=False)
    for ax, k in zip(axes[0], ks):
        _panel(ax, run, k)
    handles, labels = axes[0][-1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.suptitle(f"{run.algorithm.title}: f = 0 and f = ±1", fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 0.95))
    return _save(fig, path)


def _save(fig, path):
    if path is not None:
        fig.savefig(path, dpi=90)
        _plt().close(fig)
    return path if path is not None else fig


def _idsvm_paths(run):
    """The increments of the IDSVM example with the most breakpoints: (c, [(alpha_c,
    alpha vector, event)])."""
    segments, current = {}, None
    for s in run.steps:
        if s.line.startswith("Sec. 3: g_c < 0") or s.line.startswith("Sec. 4: lower"):
            current = (s.example, s.quantities["c"])
            segments[current] = [(0.0 if s.line.startswith("Sec. 3") else
                                  s.quantities["alpha_c"], s.check["alpha"], "start")]
        elif s.line == "Sec. 2.2: the largest increment" and current is not None:
            event = s.quantities["event"]
        elif s.line == "Eq. 3: the increment" and current is not None:
            segments[current].append((s.quantities["alpha_c"], s.check["alpha"], event))
    if not segments:
        return None
    key = max(segments, key=lambda k: len(segments[k]))
    return key[1], segments[key]


def _poker_paths(run):
    """The adjustable-bias path (b) of the chunk with the most breakpoints:
    (chunk, [(b, alpha vector)])."""
    paths, current = {}, None
    for s in run.steps:
        if s.line == "Fig. 1 line 4":
            current = s.example
            paths[current] = [(s.quantities["b"], s.check["alpha"])]
        elif s.line == "Sec. 3: b moves to the breakpoint" and current is not None:
            paths[current].append((s.quantities["b"], s.check["alpha"]))
        elif s.line.startswith("Fig. 1 line 5"):
            current = None
    if not paths:
        return None
    key = max(paths, key=lambda k: len(paths[k]))
    return key, paths[key]


def alpha_path_figure(run, path=None):
    """The α of every example against the path parameter: α_c for an IDSVM increment
    (or decrement), b for POKER's adjustable-bias path; each breakpoint (a set change)
    marked.  Between breakpoints the paths are affine, so the segments are exact."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    if run.algorithm.model == "idsvm":
        found = _idsvm_paths(run)
        if found is None:
            return None
        c, points = found
        t = np.array([p[0] for p in points])
        xlabel, what = "α_c (the path parameter)", f"example {c}"
    else:
        found = _poker_paths(run)
        if found is None:
            return None
        c, points = found
        t = np.array([p[0] for p in points])
        xlabel, what = "b (the path parameter of POKERadjustbias)", f"the chunk at example {c}"
    size = max(len(p[1]) for p in points)
    A = np.array([np.pad(p[1], (0, size - len(p[1]))) for p in points])
    moving = [j for j in range(size) if np.ptp(A[:, j]) > 0]
    for j in moving:
        ax.plot(t, A[:, j], "-", lw=1.2, label=f"α_{j}")
    for tk in t[1:-1]:
        ax.axvline(tk, color="grey", lw=0.5, ls=":")
    ax.plot(t, A[:, moving].T.T if moving else np.zeros_like(t), "k.", ms=4)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("α_i")
    ax.set_title(f"{run.algorithm.title}: α paths of {what}; dotted: breakpoints",
                 fontsize=9)
    if len(moving) <= 12:
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return _save(fig, path)


def optimal_radius(X, y, C):
    """The radius of the minimum ball enclosing the augmented points [y_n x_n; C^{-1/2}
    e_n] (Eq. 7), n = 1..len(X), by :func:`refsvm.stream_svm.enclosing_ball.enclosing_ball`."""
    from ..stream_svm.enclosing_ball import enclosing_ball

    Z = y[:, None] * X
    G = Z @ Z.T + np.eye(len(X)) / C
    return float(enclosing_ball(G, 0.0)[1])


def radius_series(run, every=2):
    """(examples seen, R after each, the marks, the optimal radius at each mark): the
    radius the trace recorded (line 8 of Alg. 1, line 8 of Alg. 2) and the minimum
    enclosing ball of the augmented points seen."""
    current, last = 0.0, {}
    for s in run.steps:
        if isinstance(s.example, (int, np.integer)):
            if "R" in s.check:
                current = s.check["R"]
            last[s.example] = current
    ks = sorted(last)
    marks = list(range(2, run.X.shape[0] + 1, every))
    opt = [optimal_radius(run.X[:m], run.y[:m], run.state.C) for m in marks]
    return [k + 1 for k in ks], [last[k] for k in ks], marks, opt


def radius_figure(run, path=None, every=2):
    """The ball's radius R after each example (lines 8 / Alg. 2 line 8 of the trace)
    against 3/2 of the optimal (minimum enclosing ball) radius of the points seen so far
    (the bound of Zarrabi-Zadeh and Chan) and the optimal radius itself."""
    plt = _plt()
    n_seen, R, marks, opt = radius_series(run, every)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.step(n_seen, R, where="post", label="R (StreamSVM's ball)")
    ax.plot(marks, opt, "k-", lw=1, label="optimal MEB radius")
    ax.plot(marks, 1.5 * np.array(opt), "r--", lw=1, label="3/2 × optimal (the bound)")
    ax.set_xlabel("examples seen")
    ax.set_ylabel("radius")
    ax.set_title(f"{run.algorithm.title}: the radius against the 3/2 bound", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, path)


def animation(run, path, frames=None):
    """A GIF of the decision function and the sets after each example (``frames``: the
    example counts shown, default every example)."""
    plt = _plt()
    from matplotlib.animation import FuncAnimation, PillowWriter

    n = run.X.shape[0]
    frames = list(range(2, n + 1)) if frames is None else list(frames)
    fig, ax = plt.subplots(figsize=(4.2, 4.2))

    def draw(k):
        ax.clear()
        _panel(ax, run, k, grid_n=40)
        ax.set_title(f"{run.algorithm.title}\nafter {k} examples", fontsize=8)

    anim = FuncAnimation(fig, draw, frames=frames)
    anim.save(path, writer=PillowWriter(fps=4))
    plt.close(fig)
    return path


def plot_run(run, directory, animate=True):
    """Every figure that suits the run, written to ``directory``; returns the paths."""
    os.makedirs(directory, exist_ok=True)
    name = run.algorithm.name
    out = []
    if run.X.shape[1] == 2:
        out.append(decision_figure(run, path=os.path.join(directory, f"{name}_decision.png")))
    if run.algorithm.model in ("idsvm", "poker"):
        p = alpha_path_figure(run, path=os.path.join(directory, f"{name}_alpha_paths.png"))
        if p:
            out.append(p)
    if run.algorithm.model == "stream":
        out.append(radius_figure(run, path=os.path.join(directory, f"{name}_radius.png")))
    if animate and run.X.shape[1] == 2 and run.algorithm.model not in ("poker",):
        out.append(animation(run, os.path.join(directory, f"{name}_steps.gif")))
    return out
