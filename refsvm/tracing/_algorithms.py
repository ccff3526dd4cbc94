"""What each traced algorithm is: its paper, its printed lines, how its reference is made
(paper form), driven over a stream, watched (IDSVM, POKER) and checked after each line."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core.trace import watch

PAPERS = {
    "lee_tseng_chen": "Lee, Tseng, Chen: Online Nonlinear SVM (slides; shared/papers/002)",
    "bagnell": "Bagnell: Notes on efficient online SVM implementation (003)",
    "wang_vucetic": "Wang & Vucetic: Fast Online Training of Ramp Loss SVMs (000)",
    "cauwenberghs_poggio": "Cauwenberghs & Poggio: Incremental and Decremental SVM Learning",
    "fine_scheinberg": "Fine & Scheinberg: POKER (001)",
    "rai_daume_venkatasubramanian": "Rai, Daumé, Venkatasubramanian: Streamed Learning (004)",
}


@dataclass
class Algorithm:
    """One traced algorithm: ``lines`` maps each printed line (as the trace names it) to
    its text in the paper; ``make(n_features)`` builds the reference in paper form;
    ``drive(state, X, y, tracer)`` runs it over the stream; ``check(state, line, q)``
    returns the invariant after a line (a dict; its key ``ok`` says whether it holds)."""

    name: str
    paper: str
    title: str
    lines: dict
    make: Callable
    drive: Callable = None
    check: Callable = None
    blocks: dict = field(default_factory=dict)
    relabel: dict = field(default_factory=dict)
    keep: Callable = None
    chunk: int = 0
    model: str = "linear"          # how the figures read the model (linear, kernel, poker)

    def label(self, line):
        for old in sorted(self.relabel, key=len, reverse=True):
            if line.startswith(old):
                return self.relabel[old] + line[len(old):]
        return line


def _stream(state, X, y, tracer):
    for t in range(X.shape[0]):
        tracer.example = t
        state.step(X[t], float(y[t]))


# ---------------------------------------------------------------- checks
def _linear_check(state, line, q):
    w = np.array(state.w, dtype=float)
    out = {"w": w, "b": float(state.b)}
    if "margin" in q and line.endswith("update"):
        out["margin after"] = q["margin"]
    return out


def _pa_check(variant):
    def check(state, line, q):
        out = _linear_check(state, line, q)
        if line == "PA: update":   # PA: the example now has margin 1 (PA-I: <= 1, PA-II < 1)
            m = q["margin"]
            out["ok"] = bool(abs(m - 1.0) <= 1e-9 if variant == 0 else m <= 1.0 + 1e-9)
        return out
    return check


def _pegasos_check(state, line, q):
    w = np.array(state.w, dtype=float)
    out = {"w": w, "b": float(state.b), "|w|^2": float(w @ w + state.b ** 2)}
    if state.project and line in ("Alg. 1 lines 10-12", "Alg. 1 line 13"):
        out["ok"] = bool(out["|w|^2"] <= (1.0 + 1e-9) / state.lam)   # w in the ball of 1/sqrt(lam)
    return out


def _kernel_pa_check(state, line, q):
    out = {"n_sv": len(state.coef), "coef": np.array(state.coef)}
    if line == "Kernel PA: update":   # the new margin is 1, or below it when PA-I's C caps τ
        exact = state.variant == 0 or (state.variant == 1 and q["tau"] < state.C)
        m = q["margin"]
        out["ok"] = bool(abs(m - 1.0) <= 1e-9 if exact else m <= 1.0 + 1e-9)
    return out


def _ramp_check(state, line, q):
    a, g, v = state.alpha, state.g, state.in_v
    viol = np.where(v & (a < state.C), np.maximum(g, 0.0), 0.0)
    viol = np.maximum(viol, np.where(v & (a > 0), np.maximum(-g, 0.0), 0.0))
    out = {"V": state.ids[v].tolist(), "alpha": a.copy(), "g": g.copy(), "ids": state.ids.copy(),
           "max Eq. 3 violation on V": float(viol.max(initial=0.0)),
           "alpha = 0 off V": bool(np.all(a[~v] == 0.0))}
    if line == "Alg. 1 steps 9/27":                # after steps 23-26: alpha = 0 off V
        out["ok"] = out["alpha = 0 off V"]
    if line == "Alg. 1 steps 9/27" and not q["changed"]:
        # the end of a model update: V = {i : g_i <= 2}, Eq. 3 on V (unless the gain rule)
        out["ok"] = bool(out["ok"] and np.array_equal(v, g <= state.outlier_bound)
                         and (out["max Eq. 3 violation on V"] <= state.tol or state.gain_stopped))
    return out


def _stream_svm_check(state, line, q):
    out = {"R": float(state.R), "xi2": float(state.xi2), "M": int(state.M)}
    if hasattr(state, "w") and hasattr(state.w, "s"):
        out["w"] = state.w.s * np.asarray(state.w.v, dtype=float)
    if line in ("Alg. 1 line 8", "Alg. 2 line 8"):
        prev = getattr(state, "_trace_R", 0.0)
        out["ok"] = bool(state.R >= prev)         # the ball never shrinks
        state.__dict__["_trace_R"] = state.R
    return out


def _idsvm_sets(state):
    from ..idsvm.constants import ERROR, MARGIN, REST
    n = state.n
    st, g, a, y = state.status[:n], state.g[:n], state.alpha[:n], state.y[:n]
    S, E, R = (np.flatnonzero(st == s) for s in (MARGIN, ERROR, REST))
    kkt = max(float(np.abs(g[S]).max(initial=0.0)), float((-g[R]).max(initial=0.0)),
              float(g[E].max(initial=0.0)))
    live = st >= 0
    return {"S": S.tolist(), "E": E.tolist(), "R": R.tolist(), "alpha": a.copy(),
            "b": float(state.b), "KKT (Eq. 2) residual": kkt,
            "|y'alpha|": abs(float(np.dot(y[live], a[live])))}


def _idsvm_check(state, line, q):
    out = _idsvm_sets(state)
    scale = 1e-7 * max(1.0, state.C)
    out["ok"] = bool(out["KKT (Eq. 2) residual"] <= scale and out["|y'alpha|"] <= scale)
    return out


def _poker_check(state, line, q):
    from ..poker.partition import I_C, I_O, I_S
    n = state.n
    st, g, a, y = state.status[:n], state.g[:n], state.alpha[:n], state.y[:n]
    S, C, O = (np.flatnonzero(st == s) for s in (I_S, I_C, I_O))
    kkt = max(float(np.abs(g[S]).max(initial=0.0)), float((-g[O]).max(initial=0.0)),
              float(g[C].max(initial=0.0)))
    live = st >= 0
    out = {"I_s": S.tolist(), "I_c": C.tolist(), "I_o": O.tolist(), "alpha": a.copy(),
           "b": float(state.b), "u": float(getattr(state, "u", 1.0)),
           "partition residual": kkt, "|y'alpha|": abs(float(np.dot(y[live], a[live])))}
    out["ok"] = bool(kkt <= 1e-7 * max(1.0, state.C))
    if line.startswith("Sec. 3: y'alpha = 0") or line.startswith("Fig. 1 line 5"):
        out["ok"] = bool(out["ok"] and out["|y'alpha|"] <= 1e-7 * max(1.0, state.C))
    return out


# ---------------------------------------------------------------- makers and drivers
def _perceptron_drive(state, X, y, tracer, max_epochs=5):
    tracer.example = None
    state.R2 = state.scan_radius(X)[0]
    tracer("Perceptron: init", R=state.R)
    for _ in range(max_epochs):
        before = state.n_mistakes
        _stream(state, X, y, tracer)
        tracer.example = None
        tracer("Perceptron: until", mistakes=state.n_mistakes - before)
        if state.n_mistakes == before:
            return


def _pegasos_drive(state, X, y, tracer):
    _stream(state, X, y, tracer)
    tracer.example = None
    state.flush()


def _asvmr_drive(state, X, y, tracer):
    from ..ramp.online_asvmr import online_asvmr
    for t in range(X.shape[0]):
        tracer.example = t
        online_asvmr(state, X, lambda i: float(y[i]), start=t, stop=t + 1)


def _lookahead_drive(state, X, y, tracer):
    _stream(state, X, y, tracer)
    tracer.example = None
    if state.buffer:
        tracer("Alg. 2 lines 12-14", S=[s[5] for s in state.buffer])
        state.flush()


def _unlearn_drive(state, X, y, tracer):
    """Learn the stream untraced, then unlearn (traced) a margin vector, an error vector
    and a rest example, whichever exist, then the first examples."""
    tracer.muted = True
    _stream(state, X, y, tracer)
    tracer.muted = False
    sets = _idsvm_sets(state)
    ids = [s[0] for s in (sets["S"], sets["E"], sets["R"]) if s]
    ids += [i for i in range(3) if i not in ids]
    for c in ids:
        tracer.example = c
        state.unlearn([c])


def _chunks(state, X, y, tracer, size):
    for k in range(0, X.shape[0], size):
        tracer.example = k
        state.add_chunk(X[k:k + size], y[k:k + size])


def _self_init(state, X, y, tracer):
    tracer.example = 0
    state.self_init(X, y)


# ---------------------------------------------------------------- IDSVM blocks (watch)
def _emit(line, **fields):
    def hook(state, tracer, args, result):
        tracer(line, **{k: f(state, args, result) for k, f in fields.items()})
    return hook


def _idsvm_event_names():
    from ..idsvm import constants as k
    return {k.EV_C_MARGIN: "g_c reaches 0", k.EV_C_BOUND: "alpha_c reaches C",
            k.EV_C_ZERO: "alpha_c reaches 0", k.EV_S_OUT: "a margin vector leaves S",
            k.EV_JOIN: "an example joins S"}


def _idsvm_step_before(state, tracer, args, result):
    state.__dict__["_trace_learned"] = False


def _idsvm_learn_before(state, tracer, args, result):
    state.__dict__["_trace_learned"] = True
    c = args[0]
    tracer("Sec. 3: g_c < 0: raise alpha_c", c=c, g_c=float(state.g[c]))


def _idsvm_step_after(state, tracer, args, result):
    if not state.__dict__.get("_trace_learned"):
        c = state.n - 1
        tracer("Sec. 3: g_c >= 0: c joins R", c=c, g_c=float(state.g[c]))


def _idsvm_membership(state, tracer, args, result):
    c, sign, col, t, kind, i = args[:6]
    names = _idsvm_event_names()
    tracer("Sec. 2.2: " + names[kind], c=c, i=i, t=t, done=bool(result))


IDSVM_BLOCKS = {
    "step": (_idsvm_step_before, _idsvm_step_after),
    "_learn": (_idsvm_learn_before, None),
    "_sensitivities": (None, _emit("Eqs. 5-7: beta = -R m, gamma",
                                   beta_b=lambda s, a, r: float(r[3]), beta_S=lambda s, a, r: r[2])),
    "_limiting_event": (None, _emit("Sec. 2.2: the largest increment",
                                    t=lambda s, a, r: float(r[0]),
                                    event=lambda s, a, r: _idsvm_event_names()[r[1]],
                                    i=lambda s, a, r: int(r[2]))),
    "_increment": (None, _emit("Eq. 3: the increment", c=lambda s, a, r: a[0],
                               alpha_c=lambda s, a, r: float(s.alpha[a[0]]),
                               b=lambda s, a, r: float(s.b))),
    "_change_membership": (None, _idsvm_membership),
    "_grow_inverse": (None, _emit("Eq. 8: R grows", i=lambda s, a, r: a[0],
                                  size_S=lambda s, a, r: len(s.S))),
    "_shrink_inverse": (_emit("Eq. 9: R shrinks", i=lambda s, a, r: s.S[a[0]],
                              size_S=lambda s, a, r: len(s.S) - 1), None),
    "_unlearn_one": (_emit("Sec. 4: lower alpha_c to 0", c=lambda s, a, r: a[0],
                           alpha_c=lambda s, a, r: float(s.alpha[a[0]])), None),
    "_remove": (None, _emit("Sec. 4: c leaves the problem", c=lambda s, a, r: a[0])),
}


# ---------------------------------------------------------------- POKER blocks (watch)
def _poker_chunk_before(state, tracer, args, result):
    state.__dict__["_trace_chunk"] = [int(i) for i in args[0]]
    state.__dict__["_trace_lines"] = set()


def _poker_chunk_after(state, tracer, args, result):
    state.__dict__["_trace_chunk"] = None
    tracer("Fig. 1 line 5", violated=int(result))


def _poker_lines_0_2(state, tracer, before_fixed):
    ids = state.__dict__.get("_trace_chunk")
    done = state.__dict__.get("_trace_lines", set())
    if not ids or state.__dict__.get("_trace_selfinit"):
        return
    if "1" not in done:
        done.add("1")
        tracer("Fig. 1 line 1", new=ids, s=[float(state.g[j]) for j in ids],
               p=[float(state.p[j]) for j in ids])
    if before_fixed and "0" not in done:
        done.add("0")
        tracer("Fig. 1 line 0", b=float(state.b))


def _poker_activate_after(state, tracer, args, result):
    if state.__dict__.get("_trace_chunk") and not state.__dict__.get("_trace_selfinit"):
        tracer("Fig. 1 line 2", n=int(np.sum(state.status[: state.n] >= 0)))


def _poker_fixed_before(state, tracer, args, result):
    _poker_lines_0_2(state, tracer, True)
    tracer("Fig. 1 line 3", b=float(state.b))


def _poker_adjust_before(state, tracer, args, result):
    if state.__dict__.pop("_trace_selfinit", False):
        tracer("SelfInit: trivial partition", b=float(state.b))
    else:
        _poker_lines_0_2(state, tracer, False)
    tracer("Fig. 1 line 4", b=float(state.b))


def _poker_selfinit_before(state, tracer, args, result):
    state.__dict__["_trace_selfinit"] = True


def _poker_move_after(state, tracer, args, result):
    from ..poker.partition import BIAS, FIXED
    mode, t = args[0], float(args[1])
    if mode == FIXED:
        tracer("Eq. 3: u moves to the breakpoint", t=t, u=float(state.u))
    elif mode == BIAS:
        tracer("Sec. 3: b moves to the breakpoint", t=t, b=float(state.b),
               y_alpha=float(state.tau))


def _poker_end_after(state, tracer, args, result):
    from ..poker.partition import BIAS, FIXED
    if args[0] == FIXED:
        tracer("Eq. 3: u = 1", b=float(state.b))
    elif args[0] == BIAS:
        tracer("Sec. 3: y'alpha = 0, b = b*", b=float(state.b))


def _poker_path(phase):
    from ..poker.partition import BIAS, FIXED
    return {FIXED: "fixed bias (u)", BIAS: "adjustable bias (b)"}.get(phase, str(phase))


def _fixed_only(line, q):
    """poker-fixed keeps the lines of the fixed-bias method (its breakpoints only)."""
    return line in FIXED_LINES and q.get("path", "fixed bias (u)") == "fixed bias (u)"


POKER_BLOCKS = {
    "learn_ids": (_poker_chunk_before, _poker_chunk_after),
    "_self_init_ids": (_poker_selfinit_before, None),
    "_activate": (None, _poker_activate_after),
    "fixed_bias": (_poker_fixed_before, None),
    "adjust_bias": (_poker_adjust_before, None),
    "_move": (None, _poker_move_after),
    "_leave": (None, _emit("Sec. 3: an alpha_s reaches 0 or c", i=lambda s, a, r: a[0],
                           to=lambda s, a, r: "I_c" if a[1] else "I_o",
                           path=lambda s, a, r: _poker_path(s.phase))),
    "_join": (None, _emit("Sec. 3: an s_o or xi_c reaches 0", i=lambda s, a, r: a[0],
                          path=lambda s, a, r: _poker_path(a[1]))),
    "_end_of_parameter": (None, _poker_end_after),
}


# ---------------------------------------------------------------- the printed lines
PERCEPTRON_LINES = {
    "Perceptron: init": "Initiation: k = 0, R = max_j ||x^j||",
    "Perceptron: if": "if y_t(<w^k, x^t> + b_k) <= 0",
    "Perceptron: update": "w^{k+1} = w^k + η y_t x^t;  b_{k+1} = b_k + η y_t R²;  k = k + 1",
    "Perceptron: until": "until no mistake made within the for-loop",
}
PA_LINES = {
    "PA: loss": "ℓ_t = max(0, 1 − y_t <w_t, x_t>)  (passive when ℓ_t = 0)",
    "PA: step size": "τ_t = ℓ_t/||x_t||² (PA), min(C, ·) (PA-1), ℓ_t/(||x_t||² + 1/(2C)) (PA-2)",
    "PA: update": "w_{t+1} = w_t + τ_t y_t x_t",
}
PAM_LINES = {
    "PAm: statistics": "m±, s± of the classes so far (quasi-LDA)",
    "PAm: loss": "ℓ_t = max(0, 1 − y_t <w_t, x_t>)  (passive when ℓ_t = 0)",
    "PAm: step size": "w_p (quasi-LDA); α_t = (ℓ_t − γ y_t <w_p, x_t>)/||x_t||² (-1: min{C, ·})",
    "PAm: update": "w_{t+1} = w_t + γ w_p + α_t y_t x_t",
}
RKPA_LINES = {
    "RKPA: features": "φ(x^t) = Λ^{-1/2} Pᵀ K(Ã, x^t)",
    "RKPA Eq. (8): passive": "ℓ_t = 0: z, b unchanged",
    "RKPA Eq. (8): loss": "ℓ_t = max(0, 1 − y_t (zᵀφ(x^t) + b))",
    "RKPA Eq. (8): step size": "α_t = ℓ_t/(||φ||² + 1) (RKPA), min{C, ·} (-1), + 1/(2C) (-2)",
    "RKPA Eq. (8): update": "z^{t+1} = z^t + α_t y_t φ(x^t);  b_{t+1} = b_t + α_t y_t",
}
RKPAM_LINES = {
    "RKPAm: features": "φ(x^t) = Λ^{-1/2} Pᵀ K(Ã, x^t)",
    "RKPAm Eq. (9): passive": "ℓ_t = 0: z, b unchanged (the statistics grow)",
    "RKPAm Eq. (9): statistics": "M̃±, COV(K(A±, Ã)) so far (RKFDA)",
    "RKPAm Eq. (9): loss": "ℓ_t = max(0, 1 − y_t (zᵀφ(x^t) + b))",
    "RKPAm Eq. (9): step size": "z_p; α_t = (ℓ_t − γ y_t (z_pᵀφ + b_p))/(||φ||² + 1)",
    "RKPAm Eq. (9): update": "z^{t+1} = z^t + γ z_p^t + α_t y_t φ(x^t);  b likewise",
}
PEGASOS_LINES = {
    "Alg. 1 line 5": "if y_t wᵀx_t < 1  (margin violation)",
    "Alg. 1 line 4": "α_t = 1/(λ t)",
    "Alg. 1 line 6": "w ← (1 − α_t λ) w + α_t y_t x_t",
    "Alg. 1 line 8": "else w ← (1 − α_t λ) w",
    "Alg. 1 lines 10-12": "if wᵀw > 1/λ: w ← w/(√(wᵀw) √λ)",
    "Alg. 1 line 16": "return the average of all w's (optional)",
    "Alg. 1 line 13": "t ← t + 1",
}
KERNEL_PA_LINES = {
    "Kernel PA: loss": "f(x_t) = Σ_j c_j k(x_j, x_t);  ℓ_t = max(0, 1 − y_t f(x_t))",
    "Kernel PA: update": "τ_t (PA, PA-I, PA-II with k(x_t, x_t));  x_t joins with c_t = τ_t y_t",
}
SVMR_LINES = {
    "Alg. 1 step 2": "receive the next example; f(x_{t+1}) (Eq. 4)",
    "Alg. 1 step 3": "I = I ∪ {t+1}, α_{t+1} = 0, g_{t+1} = 1 − y_{t+1} f(x_{t+1})",
    "Alg. 1 step 4": "if g_{t+1} ∈ [0, 2]",
    "Alg. 1 steps 5-8": "V = V ∪ {t+1}; α_{t+1} by Eq. 14; g_i for all i ∈ I by Eq. 15",
    "Alg. 1 steps 10-11": "while some i ∈ V violates Eq. 3 and Eq. 13 gains: pick i* (Eq. 13)",
    "Alg. 1 steps 12-14": "α_{i*} by Eq. 14; g_i for all i ∈ I by Eq. 15",
    "Alg. 1 step 17": "g_i ≤ 2 and i ∉ V: V = V ∪ {i}",
    "Alg. 1 step 19": "g_i > 2 and i ∈ V: V = V − {i}",
    "Alg. 1 steps 23-26": "for i just removed from V: α_i = 0, g by Eq. 15",
    "Alg. 1 steps 9/27": "repeat ... until V does not change",
}
REMOVAL_LINES = dict(SVMR_LINES, **{
    "Alg. 2": "X = {i : α_i = 0}; if |X| > m drop the |X| − m with the largest |1 − g_i|"})
ASVMR_LINES = dict(SVMR_LINES, **{
    "Alg. 3 step 2": "receive the next unlabeled x_{t+1}; f(x_{t+1})",
    "Alg. 3 step 3": "if |f(x_{t+1})| ≤ 1",
    "Alg. 3 steps 4-7": "query y_{t+1}; steps 3-28 of Algorithm 1",
    "Alg. 3 step 8": "endif (not queried)",
})
del ASVMR_LINES["Alg. 1 step 2"]
IDSVM_LEARN_LINES = {
    "Sec. 3: g_c >= 0: c joins R": "g_c = y_c f(x_c) − 1 ≥ 0 (Eq. 2): c joins R, terminate",
    "Sec. 3: g_c < 0: raise alpha_c": "g_c < 0: increment α_c from 0",
    "Eqs. 5-7: beta = -R m, gamma": "β = −R [y_c; Q_Sc] (Eq. 5), γ_i (Eq. 7)",
    "Sec. 2.2: the largest increment": "the largest Δα_c that changes no membership",
    "Eq. 3: the increment": "α_c, α_S, b, g move by Δα_c (Eq. 3)",
    "Sec. 2.2: g_c reaches 0": "g_c = 0: c joins S, terminate",
    "Sec. 2.2: alpha_c reaches C": "α_c = C: c joins E, terminate",
    "Sec. 2.2: a margin vector leaves S": "α_s reaches 0 or C: s joins R or E",
    "Sec. 2.2: an example joins S": "g_i reaches 0: i (in R or E) joins S",
    "Eq. 8: R grows": "R grows by a rank one (i joins S)",
    "Eq. 9: R shrinks": "R shrinks (s leaves S)",
}
IDSVM_UNLEARN_LINES = {
    "Sec. 4: lower alpha_c to 0": "decrement α_c to 0 (Sec. 4)",
    "Eqs. 5-7: beta = -R m, gamma": "β = −R [y_c; Q_Sc] (Eq. 5), γ_i (Eq. 7)",
    "Sec. 2.2: the largest increment": "the largest −Δα_c that changes no membership",
    "Eq. 3: the increment": "α_c, α_S, b, g move by Δα_c (Eq. 3)",
    "Sec. 2.2: alpha_c reaches 0": "α_c = 0: c is out",
    "Sec. 2.2: a margin vector leaves S": IDSVM_LEARN_LINES["Sec. 2.2: a margin vector leaves S"],
    "Sec. 2.2: an example joins S": IDSVM_LEARN_LINES["Sec. 2.2: an example joins S"],
    "Eq. 8: R grows": IDSVM_LEARN_LINES["Eq. 8: R grows"],
    "Eq. 9: R shrinks": IDSVM_LEARN_LINES["Eq. 9: R shrinks"],
    "Sec. 4: c leaves the problem": "c removed from the training set",
}
ALTPOKER_LINES = {
    "SelfInit: trivial partition": "(the first chunk, on an empty model: SelfInit, Sec. 5)",
    "Fig. 1 line 2": "X = X ∪ new points, y extended",
    "Fig. 1 line 1": "α_j = 0, ξ_j = 0, s_j = y_j(wᵀφ(x_j) − b) − 1; s_j < 0: s_j = 1, p_j",
    "Fig. 1 line 0": "p = −e − b y on the old points",
    "Fig. 1 line 3": "if p ≠ −e − b y: POKERfixedbias (u: 0 → 1)",
    "Eq. 3: u moves to the breakpoint": "u moves along the affine piece to the next breakpoint",
    "Eq. 3: u = 1": "u = 1: the fixed-bias system (Eq. 2) holds",
    "Fig. 1 line 4": "POKERadjustbias (b → b*, yᵀα = 0)",
    "Sec. 3: b moves to the breakpoint": "b moves along the affine piece to the next breakpoint",
    "Sec. 3: an alpha_s reaches 0 or c": "α_s reaches 0 or c: I_s → I_o or I_c",
    "Sec. 3: an s_o or xi_c reaches 0": "s_o or ξ_c reaches 0: joins I_s",
    "Sec. 3: y'alpha = 0, b = b*": "the piece where yᵀα(b) crosses 0: b = b*",
    "Fig. 1 line 5": "next chunk",
}
FIXED_LINES = {k: v for k, v in ALTPOKER_LINES.items()
               if k.startswith("Eq. 3") or k in ("Fig. 1 line 3", "Sec. 3: an alpha_s reaches 0 or c",
                                                 "Sec. 3: an s_o or xi_c reaches 0")}
ADJUST_LINES = {k: v for k, v in ALTPOKER_LINES.items()
                if k.startswith("Sec. 3") or k == "Fig. 1 line 4"}
ADJUST_LINES = {"SelfInit: trivial partition": "α_i ∈ {0, c} by class, b at the end of its range",
                **ADJUST_LINES}
STREAM_LINES = {
    "Alg. 1 line 3": "M = 1; R = 0; ξ² = 1; w = y_1 x_1",
    "Alg. 1 line 5": "d = sqrt(||w − y_n x_n||² + ξ² + 1/C)",
    "Alg. 1 line 6": "if d ≥ R  (else the point is inside the ball)",
    "Alg. 1 line 7": "w = w + ½(1 − R/d)(y_n x_n − w)",
    "Alg. 1 line 8": "R = R + ½(d − R)",
    "Alg. 1 line 9": "ξ² = ξ²[1 − ½(1 − R/d)]² + [½(1 − R/d)]²",
    "Alg. 1 line 10": "M = M + 1",
}
LOOKAHEAD_LINES = {
    "Alg. 1 line 3": STREAM_LINES["Alg. 1 line 3"],
    "Alg. 1 line 5": STREAM_LINES["Alg. 1 line 5"],
    "Alg. 1 line 6": STREAM_LINES["Alg. 1 line 6"],
    "Alg. 2 line 5": "S = S ∪ {y_n x_n}",
    "Alg. 2 line 6": "if |S| = L",
    "Alg. 2 line 7": "the minimum ball enclosing the ball and all points of S",
    "Alg. 2 line 8": "M = M + L; S = ∅",
    **{k: STREAM_LINES[k] + "  (a single point in S: Alg. 1's closed form)"
       for k in ("Alg. 1 line 7", "Alg. 1 line 8", "Alg. 1 line 9", "Alg. 1 line 10")},
    "Alg. 2 lines 12-14": "the end of the stream: the same with the points left in S",
}


def _kw(**kw):
    return kw


def _registry():
    from ..idsvm.incremental_svm import IncrementalSVMState
    from ..kernel_pa.kernel_pa import KernelPA
    from ..linear.online_linear_svm import PegasosState
    from ..linear.passive_aggressive import PAmState, PAState, PerceptronState
    from ..linear.reduced_kernel_pa import ReducedKernelPAmState, ReducedKernelPAState
    from ..poker.poker import POKERState
    from ..ramp.online_svmr import OnlineSVMR
    from ..stream_svm.stream_svm import StreamSVMLinear

    P = "paper"
    rbf = _kw(kernel="rbf", gamma=0.5)
    algos = [
        Algorithm("perceptron", "lee_tseng_chen", "Perceptron (slide 'Perceptron Algorithm')",
                  PERCEPTRON_LINES, lambda d, X: PerceptronState(d, eta=1.0, departures=P),
                  _perceptron_drive, _linear_check),
    ]
    for v, name in ((0, "PA"), (1, "PA-I"), (2, "PA-II")):
        algos.append(Algorithm(
            ("pa", "pa1", "pa2")[v], "lee_tseng_chen", f"{name} (Crammer et al.; slides Eqs. 3-5)",
            PA_LINES, lambda d, X, v=v: PAState(d, variant=v, C=0.5, fit_intercept=True,
                                                departures=P),
            _stream, _pa_check(v)))
    algos += [
        Algorithm("pam", "lee_tseng_chen", "PAm-1 (PA with the quasi-LDA proximal model)",
                  PAM_LINES, lambda d, X: PAmState(d, variant=1, C=0.5, gamma=0.1,
                                                  fit_intercept=True, departures=P),
                  _stream, _linear_check),
        Algorithm("rkpa", "lee_tseng_chen", "RKPA-1 (reduced kernel PA, Eq. 8)", RKPA_LINES,
                  lambda d, X: ReducedKernelPAState(d, reduced=X[:8], variant=1, C=1.0,
                                                    eps=1e-8, departures=P, **rbf),
                  _stream, lambda s, line, q: {"z": s.pa.w.copy(), "b": float(s.pa.b)},
                  relabel={"PA:": "RKPA Eq. (8):"}, model="rkpa"),
        Algorithm("rkpam", "lee_tseng_chen", "RKPAm-1 (reduced kernel PA + RKFDA, Eq. 9)",
                  RKPAM_LINES,
                  lambda d, X: ReducedKernelPAmState(d, reduced=X[:8], variant=1, C=1.0,
                                                     eps=1e-8, proximal_weight=0.1,
                                                     departures=P, **rbf),
                  _stream, lambda s, line, q: {"z": s.pa.w.copy(), "b": float(s.pa.b)},
                  relabel={"PAm:": "RKPAm Eq. (9):", "RKPA Eq. (8):": "RKPAm Eq. (9):",
                           "RKPA:": "RKPAm:"}, model="rkpa"),
        Algorithm("pegasos", "bagnell", "Bagnell's online linear SVM (Algorithm 1)",
                  PEGASOS_LINES,
                  lambda d, X: PegasosState(d, lam=0.1, project=True, average=True,
                                            fit_intercept=True, departures=P),
                  _pegasos_drive, _pegasos_check),
        Algorithm("kernelpa", "wang_vucetic", "Kernel PA-I (Crammer et al.; the PA baseline)",
                  KERNEL_PA_LINES, lambda d, X: KernelPA(d, C=1.0, variant=1, departures=P, **rbf),
                  _stream, _kernel_pa_check, model="kernelpa"),
        Algorithm("onlinesvmr", "wang_vucetic", "OnlineSVMR (Algorithm 1)", SVMR_LINES,
                  lambda d, X: OnlineSVMR(d, C=10.0, departures=P, **rbf), _stream,
                  _ramp_check, model="ramp"),
        Algorithm("onlinesvmr-removal", "wang_vucetic",
                  "OnlineSVMR with the removal step (Algorithms 1 and 2, m = 3)", REMOVAL_LINES,
                  lambda d, X: OnlineSVMR(d, C=10.0, max_non_sv=3, departures=P, **rbf),
                  _stream, _ramp_check, model="ramp"),
        Algorithm("onlineasvmr", "wang_vucetic", "OnlineASVMR (Algorithm 3)", ASVMR_LINES,
                  lambda d, X: OnlineSVMR(d, C=10.0, departures=P, **rbf), _asvmr_drive,
                  _ramp_check, relabel={"Alg. 1 step 2": "Alg. 3 step 2"}, model="ramp"),
        Algorithm("idsvm-learn", "cauwenberghs_poggio", "IDSVM: incremental learning (Sec. 3)",
                  IDSVM_LEARN_LINES,
                  lambda d, X: IncrementalSVMState(d, C=1.0, departures=P, **rbf), _stream,
                  _idsvm_check, blocks=IDSVM_BLOCKS, model="idsvm"),
        Algorithm("idsvm-unlearn", "cauwenberghs_poggio",
                  "IDSVM: decremental unlearning (Sec. 4)", IDSVM_UNLEARN_LINES,
                  lambda d, X: IncrementalSVMState(d, C=1.0, departures=P, **rbf),
                  _unlearn_drive, _idsvm_check, blocks=IDSVM_BLOCKS, model="idsvm"),
        Algorithm("altpoker", "fine_scheinberg", "AltPOKER (Fig. 1), chunks of 5",
                  ALTPOKER_LINES, lambda d, X: POKERState(d, C=1.0, departures=P, **rbf),
                  lambda s, X, y, t: _chunks(s, X, y, t, 5), _poker_check,
                  blocks=POKER_BLOCKS, chunk=5, model="poker"),
        Algorithm("poker-fixed", "fine_scheinberg",
                  "POKER fixed-bias method (Eq. 3; Fig. 1 line 3 of AltPOKER)", FIXED_LINES,
                  lambda d, X: POKERState(d, C=1.0, departures=P, **rbf),
                  lambda s, X, y, t: _chunks(s, X, y, t, 5), _poker_check,
                  blocks=POKER_BLOCKS, chunk=5, model="poker",
                  keep=_fixed_only),
        Algorithm("poker-adjust", "fine_scheinberg",
                  "POKER adjustable-bias method (Sec. 3), from SelfInit's trivial partition",
                  ADJUST_LINES, lambda d, X: POKERState(d, C=1.0, departures=P, **rbf),
                  _self_init, _poker_check, blocks=POKER_BLOCKS, model="poker"),
        Algorithm("streamsvm", "rai_daume_venkatasubramanian", "StreamSVM (Algorithm 1)",
                  STREAM_LINES, lambda d, X: StreamSVMLinear(d, C=1.0, departures=P),
                  _stream, _stream_svm_check, model="stream"),
        Algorithm("streamsvm-lookahead", "rai_daume_venkatasubramanian",
                  "StreamSVM with lookahead L = 3 (Algorithm 2)", LOOKAHEAD_LINES,
                  lambda d, X: StreamSVMLinear(d, C=1.0, lookahead=3, departures=P),
                  _lookahead_drive, _stream_svm_check, model="stream"),
    ]
    return {a.name: a for a in algos}


_REGISTRY = None


def algorithms():
    """name -> :class:`Algorithm`, for every traced algorithm."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _registry()
    return _REGISTRY


def attach(algo, state, tracer):
    """Set ``tracer`` on the reference ``state`` (and its inner linear state), and watch
    its block methods where the algorithm has them; returns the state."""
    state.__dict__["_tracer"] = tracer
    inner = getattr(state, "pa", None)
    if inner is not None:
        inner.__dict__["_tracer"] = tracer
    if algo.blocks:
        watch(state, tracer, algo.blocks)
    return state
