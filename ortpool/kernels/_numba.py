"""Compiled kernels (numba), imported only by the dispatch (:func:`._backend.loop`): cached on
disk, the GIL released, no ``fastmath``. The passes combine each output's taps in the numpy
plan's order (bit-identical results); MaxPool with Indices is a window loop over rank 3."""

from __future__ import annotations

import numpy as np
from numba import njit

# Columns of a pass row (int64), as :func:`._passes.pass_rows` writes them.
from ortpool.kernels._passes import FIRST, INNER, JH, JL, OUT, OUTER, PB, D, K, N, S

# error_model "numpy": x / 0 gives inf or NaN as in numpy (the default "python" would raise).
_OPTS = {"cache": True, "nogil": True, "fastmath": False, "boundscheck": False,
         "error_model": "numpy"}


@njit(inline="always", **_OPTS)
def _max(a, b):
    # np.maximum: a NaN on either side wins; on a tie the accumulated value stays.
    return a if (a >= b or a != a) else b


@njit(inline="always", **_OPTS)
def _add(a, b):
    return a + b


@njit(inline="always", **_OPTS)
def _taps(j, s, d, pb, n, k):
    """:meth:`ortpool.geometry.AxisGeometry.window_taps` of output ``j``, in closed form."""
    c = j * s - pb
    return max(0, -(c // d)), min(k, -((c - n) // d))


# One factory builds the max and the sum passes, each with its combine step compiled in. Only the
# loops specialised by literal arguments are inlined: inlining every helper doubled the first
# compile (18 s for float32 MaxPool, now about 9 s) at no measured run-time gain.


def _variant_jit(variant: str):
    """``njit`` for a ``variant`` closure, renamed ``...<locals>.<variant>.<name>``: with one
    symbol for max and sum, a process loading both from the disk cache ran one for the other.
    Not cached itself (a closure's key never matches in another process)."""

    def jit(**options):
        def wrap(func):
            func.__qualname__ = func.__qualname__.replace("<locals>.", f"<locals>.{variant}.")
            return njit(**{**_OPTS, "cache": False, **options})(func)

        return wrap

    return jit


def _make_pass(combine, variant: str):
    """The chain of passes (rows of :func:`._passes.pass_rows`) with ``combine``. ``pass_`` is one
    function on purpose: its five shapes as functions made each compile 2.5 s longer."""
    jit = _variant_jit(variant)

    @jit(inline="always")
    def copy(w, r):
        for i in range(w.shape[0]):
            w[i] = r[i]

    @jit(inline="always")
    def into(w, r):
        for i in range(w.shape[0]):
            w[i] = combine(w[i], r[i])

    @jit(inline="always")
    def begin(w, src, at, first, ident):
        """``w`` = the tap ``first`` that covers every output (``src[at:]``), else the identity."""
        if first >= 0:
            copy(w, src[at : at + w.shape[0]])
        else:
            for i in range(w.shape[0]):
                w[i] = ident

    @jit(inline="always")
    def interior(r, w, jl, jh, pb, first, k, s, d):
        """Outputs ``[jl, jh)`` of a row, every tap inside, from a shifted row (no wraparound
        check); literal ``k``, ``s``, ``first``, ``d`` unroll and vectorise the loop."""
        base = jl * s - pb
        rr = r[base:]
        ww = w[jl:jh]
        for i in range(jh - jl):
            c = i * s
            acc = rr[c + first * d]
            for t in range(k):
                if t != first:
                    acc = combine(acc, rr[c + t * d])
            ww[i] = acc

    @jit()
    def strided_interior(r, w, jl, jh, pb, first, k, s, d):
        if d == 1 and k == 2 and s == 2 and first == 0:
            interior(r, w, jl, jh, pb, 0, 2, 2, 1)
        elif d == 1 and k == 3 and s == 2 and first == 1:
            interior(r, w, jl, jh, pb, 1, 3, 2, 1)
        elif d == 1 and k == 3 and s == 2 and first == 0:
            interior(r, w, jl, jh, pb, 0, 3, 2, 1)
        elif d == 1 and k == 4 and s == 4 and first == 0:
            interior(r, w, jl, jh, pb, 0, 4, 4, 1)
        elif d == 1 and k == 3 and s == 3 and first == 0:
            interior(r, w, jl, jh, pb, 0, 3, 3, 1)
        else:
            interior(r, w, jl, jh, pb, first, k, s, d)

    @jit(inline="always")
    def edge(r, w, j, s, d, pb, first, n, k, ident):
        """Output ``j`` of a row from its own taps: ``first`` (else the identity), then the rest."""
        c = j * s - pb
        acc = r[c + first * d] if first >= 0 else ident
        lo, hi = _taps(j, s, d, pb, n, k)
        for t in range(lo, hi):
            if t != first:
                acc = combine(acc, r[c + t * d])
        w[j] = acc

    @jit()
    def fused(w, a, b, c, k):
        """``w = combine(combine(a, b), c)`` (``k == 3``) or ``combine(a, b)``."""
        if k == 2:
            for i in range(w.shape[0]):
                w[i] = combine(a[i], b[i])
        else:
            for i in range(w.shape[0]):
                w[i] = combine(combine(a[i], b[i]), c[i])

    @jit()
    def edge_column(cur, tgt, outer, n, out, j, s, d, pb, first, k, ident):
        """Output ``j`` of every row of a flat pass from its own taps."""
        lo, hi = _taps(j, s, d, pb, n, k)
        c = j * s - pb
        if first >= 0 and hi - lo == 2 and lo <= first < hi:
            # One tap besides the first (a 3-tap window at the border): no tap loop, 3x faster.
            a = cur[c + first * d :]
            b = cur[c + (lo + hi - 1 - first) * d :]
            for o in range(outer):
                tgt[o * out + j] = combine(a[o * n], b[o * n])
            return
        for o in range(outer):
            edge(cur[o * n : (o + 1) * n], tgt[o * out : (o + 1) * out], j, s, d, pb, first, n, k,
                 ident)

    @jit(inline="always")
    def flat_tap(tgt, ph, total, o, s, init):
        """Tap at offset ``o`` for every output of the flat block: output ``q`` reads element
        ``q + o // s`` of phase ``o % s`` (the row edges are redone later)."""
        m = o % s
        h = o // s
        lo = max(0, -h)
        hi = min(total, total - h)
        if lo >= hi:
            return
        src = ph[m * total + lo + h : m * total + hi + h]
        if init:
            copy(tgt[lo:hi], src)
        else:
            into(tgt[lo:hi], src)

    @jit()
    def flat_inner(cur, tgt, ph, outer, n, out, s, d, pb, first, k, jl, jh, ident):
        """An inner-axis pass whose source rows are ``s`` times the target rows, as flat loops over
        the whole plane (short rows cost more in calls than in work), a strided source split into
        its ``s`` phases; the row edges, wrong across the seams, are then redone."""
        total = outer * out
        if first >= 0 and s > 1 and (k - 1) * d < s:
            # Neighbouring windows share no element: each output reads its own s-element group
            # once (a loop that vectorises); the outputs whose taps leave the plane are edges.
            q0 = (pb + s - 1) // s
            q1 = min(total, (outer * n + pb - (k - 1) * d - 1) // s + 1)
            if q0 < q1:
                strided_interior(cur, tgt, q0, q1, pb, first, k, s, d)
        else:
            if s == 1:
                ph = cur
            elif s == 2:
                _deinterleave(cur, ph, total, 2)
            elif s == 4:
                _deinterleave(cur, ph, total, 4)
            else:
                _deinterleave(cur, ph, total, s)
            if _fusable(first, k):
                # Every tap of a window in one loop over the outputs whose taps are all in the
                # block; the others are row edges.
                t1, t2 = _order(first, k)
                h0, h1, h2 = (first * d - pb) // s, (t1 * d - pb) // s, (t2 * d - pb) // s
                q0 = max(0, -h0, -h1, -h2)
                q1 = min(total, total - h0, total - h1, total - h2)
                if q0 < q1:
                    b0 = ((first * d - pb) % s) * total + q0
                    b1 = ((t1 * d - pb) % s) * total + q0
                    b2 = ((t2 * d - pb) % s) * total + q0
                    m = q1 - q0
                    fused(tgt[q0:q1], ph[b0 + h0 : b0 + h0 + m], ph[b1 + h1 : b1 + h1 + m],
                          ph[b2 + h2 : b2 + h2 + m], k)
            else:
                if first >= 0:
                    flat_tap(tgt, ph, total, first * d - pb, s, True)
                else:
                    for q in range(total):
                        tgt[q] = ident
                for t in range(k):
                    if t != first:
                        flat_tap(tgt, ph, total, t * d - pb, s, False)
        for j in range(jl):
            edge_column(cur, tgt, outer, n, out, j, s, d, pb, first, k, ident)
        for j in range(jh, out):
            edge_column(cur, tgt, outer, n, out, j, s, d, pb, first, k, ident)

    @jit()
    def rows(cur, tgt, sb, db, j0, j1, inner, s, d, pb, first, n, k, ident):
        """Output rows ``[j0, j1)`` of an outer-axis pass, each from its own taps, tap by tap."""
        for j in range(j0, j1):
            drow = db + j * inner
            w = tgt[drow : drow + inner]
            c0 = j * s - pb
            begin(w, cur, sb + (c0 + first * d) * inner, first, ident)
            lo, hi = _taps(j, s, d, pb, n, k)
            for t in range(lo, hi):
                if t != first:
                    srow = sb + (c0 + t * d) * inner
                    into(w, cur[srow : srow + inner])

    @jit(inline="always")
    def interior_rows(cur, tgt, sb, db, jl, jh, inner, s, d, pb, first, k):
        """Rows ``[jl, jh)`` of an outer-axis pass, every tap inside (2-3x faster than rows)."""
        for j in range(jl, jh):
            w = tgt[db + j * inner : db + (j + 1) * inner]
            start = sb + (j * s - pb) * inner
            copy(w, cur[start + first * d * inner : start + first * d * inner + inner])
            for t in range(k):
                if t != first:
                    into(w, cur[start + t * d * inner : start + t * d * inner + inner])

    @jit()
    def pass_(cur, tgt, ph, row, ident):
        # A run-time int64: a literal 0 would compile ``rows`` again for Literal[int](0).
        j0 = np.int64(0)
        n, out, outer, inner = row[N], row[OUT], row[OUTER], row[INNER]
        s, d, pb, first = row[S], row[D], row[PB], row[FIRST]
        k, jl, jh = row[K], row[JL], row[JH]
        if inner == 1 and n == s * out and 2 * (jh - jl) >= out:
            flat_inner(cur, tgt, ph, outer, n, out, s, d, pb, first, k, jl, jh, ident)
            return
        if inner == 1 and s != 1:
            # The edges (every output without a first tap) from their own tap ranges; the
            # interior by the specialised loop.
            lo, hi = (jl, jh) if first >= 0 else (out, out)
            for o in range(outer):
                r = cur[o * n : (o + 1) * n]
                w = tgt[o * out : (o + 1) * out]
                for j in range(lo):
                    edge(r, w, j, s, d, pb, first, n, k, ident)
                for j in range(hi, out):
                    edge(r, w, j, s, d, pb, first, n, k, ident)
                if first >= 0:
                    strided_interior(r, w, jl, jh, pb, first, k, s, d)
            return
        if s == 1 and _fusable(first, k) and jl < jh:
            # Not at stride >= 2: reading k rows at once ran 2x slower than one stream.
            t1, t2 = _order(first, k)
            for o in range(outer):
                sb = o * n * inner
                db = o * out * inner
                rows(cur, tgt, sb, db, j0, jl, inner, s, d, pb, first, n, k, ident)
                rows(cur, tgt, sb, db, jh, out, inner, s, d, pb, first, n, k, ident)
                m = (jh - jl) * inner
                start = sb + (jl - pb) * inner
                fused(tgt[db + jl * inner : db + jh * inner],
                      cur[start + first * d * inner : start + first * d * inner + m],
                      cur[start + t1 * d * inner : start + t1 * d * inner + m],
                      cur[start + t2 * d * inner : start + t2 * d * inner + m], k)
            return
        if s == 1:
            # Stride 1: the outputs of one tap are one contiguous span of rows in the target and
            # the source: each tap is one flat loop (every output still gets its taps in order).
            span = out * inner
            for o in range(outer):
                sb = o * n * inner
                wo = tgt[o * span : (o + 1) * span]
                begin(wo, cur, sb + (first * d - pb) * inner, first, ident)
                # Only the taps inside for some output (pb - t*d < out and n + pb - t*d > 0).
                for t in range(max(0, (pb - out) // d + 1), min(k, -(-(n + pb) // d))):
                    if t == first:
                        continue
                    lo = max(0, pb - t * d)
                    hi = min(out, n + pb - t * d)
                    if lo >= hi:
                        continue
                    start = sb + (lo - pb + t * d) * inner
                    into(wo[lo * inner : hi * inner], cur[start : start + (hi - lo) * inner])
            return
        for o in range(outer):
            sb = o * n * inner
            db = o * out * inner
            if first < 0 or jl >= jh:
                rows(cur, tgt, sb, db, j0, out, inner, s, d, pb, first, n, k, ident)
                continue
            rows(cur, tgt, sb, db, j0, jl, inner, s, d, pb, first, n, k, ident)
            rows(cur, tgt, sb, db, jh, out, inner, s, d, pb, first, n, k, ident)
            if k == 2 and d == 1:
                interior_rows(cur, tgt, sb, db, jl, jh, inner, s, 1, pb, first, 2)
            elif k == 3 and d == 1:
                interior_rows(cur, tgt, sb, db, jl, jh, inner, s, 1, pb, first, 3)
            else:
                interior_rows(cur, tgt, sb, db, jl, jh, inner, s, d, pb, first, k)

    @jit(inline="always")
    def chain(src, dst, info, ident, buf0, buf1, ph):
        """Every pass of one plane in order through the two scratch rows, the last into ``dst``."""
        last = info.shape[0] - 1
        cur = src
        for q in range(last + 1):
            if q == last:
                tgt = dst
            elif q % 2 == 0:
                tgt = buf0
            else:
                tgt = buf1
            pass_(cur, tgt, ph, info[q], ident)
            cur = tgt

    return chain


_chain_max = _make_pass(_max, "max")
_chain_sum = _make_pass(_add, "sum")


@njit(inline="always", **_OPTS)
def _fusable(first, k):
    return first >= 0 and (k == 2 or k == 3)


@njit(inline="always", **_OPTS)
def _order(first, k):
    """The taps after ``first``, in order (for k = 2 the second is repeated, unused)."""
    t1 = 1 if first == 0 else 0
    t2 = 3 - first - t1 if k == 3 else t1
    return t1, t2


@njit(inline="always", **_OPTS)
def _deinterleave(src, ph, total, s):
    """``ph[m * total + q] = src[q * s + m]``: the ``s`` contiguous phases of a strided source."""
    for q in range(total):
        for m in range(s):
            ph[m * total + q] = src[q * s + m]


@njit(**_OPTS)
def max_planes(src, dst, info, ident, work, inter):
    """``dst[p] = separable max of src[p]``; ``work``: two intermediates, then the phases."""
    buf0, buf1, ph = work[:inter], work[inter : 2 * inter], work[2 * inter :]
    for p in range(src.shape[0]):
        _chain_max(src[p], dst[p], info, ident, buf0, buf1, ph)


@njit(**_OPTS)
def average_planes(src, dst, info, divisor, zero, work, inter):
    """``dst[p] = separable sum of src[p] / divisor`` (one division per output, as numpy)."""
    buf0, buf1, ph = work[:inter], work[inter : 2 * inter], work[2 * inter :]
    m = divisor.shape[0]
    for p in range(src.shape[0]):
        _chain_sum(src[p], dst[p], info, zero, buf0, buf1, ph)
        row = dst[p]
        for q in range(0, row.shape[0], m):
            plane = row[q : q + m]
            for i in range(m):
                plane[i] = plane[i] / divisor[i]


@njit(inline="always", **_OPTS)
def _take(best, x):
    # The first maximum in tap order, the first NaN (ruling 6); branch-free.
    return (best == best) & ((x > best) | (x != x))


@njit(inline="always", **_OPTS)
def _window_row(x, yr, ir, u0, v0, cl, ch, s2, pb2, k0, k1, k2, d0, d1, d2, m0, m1, m2, base):
    """Outputs ``[cl, ch)`` of one output row whose windows are wholly inside the input."""
    for c in range(cl, ch):
        w0 = c * s2 - pb2
        best = x[u0, v0, w0]
        at = u0 * m0 + v0 * m1 + w0 * m2
        for ta in range(k0):
            u = u0 + ta * d0
            for tb in range(k1):
                v = v0 + tb * d1
                for tc in range(k2):
                    if ta == 0 and tb == 0 and tc == 0:
                        continue
                    w = w0 + tc * d2
                    val = x[u, v, w]
                    take = _take(best, val)
                    best = val if take else best
                    at = (u * m0 + v * m1 + w * m2) if take else at
        yr[c] = best
        ir[c] = base + at


@njit(inline="always", **_OPTS)
def _row_taps(r, c, tb, start, k2, best, code):
    """Taps ``start..k2-1`` of tap row ``tb`` for the window at ``c``: (best, code)."""
    for tc in range(start, k2):
        val = r[c + tc]
        take = _take(best, val)
        best = val if take else best
        code = (tb * k2 + tc) if take else code
    return best, code


@njit(inline="always", **_OPTS)
def _window_rows(x, yr, ir, u0, v0, cl, ch, s2, pb2, k1, k2, m0, m1, m2, base):
    """As :func:`_window_row` for windows of one depth tap, up to 3 rows, unit dilation: each
    output keeps the code of its winning tap, so the loop vectorises (SegNet's 2x2: 3.6x)."""
    w0 = cl * s2 - pb2
    r0 = x[u0, v0, w0:]
    r1 = x[u0, v0 + min(1, k1 - 1), w0:]
    r2 = x[u0, v0 + min(2, k1 - 1), w0:]
    yo = yr[cl:ch]
    io = ir[cl:ch]
    off0 = base + u0 * m0 + v0 * m1 + w0 * m2
    for i in range(ch - cl):
        c = i * s2
        best = r0[c]
        code = 0
        best, code = _row_taps(r0, c, 0, 1, k2, best, code)
        if k1 > 1:
            best, code = _row_taps(r1, c, 1, 0, k2, best, code)
        if k1 > 2:
            best, code = _row_taps(r2, c, 2, 0, k2, best, code)
        yo[i] = best
        io[i] = off0 + c * m2 + (code // k2) * m1 + (code % k2) * m2


@njit(**_OPTS)
def _edge_output(x, yr, ir, u0, v0, w0, a, b, c, geo, m0, m1, m2, ident, base):
    """Output (a, b, c) from its own tap ranges: the identity and -1 when every tap is padding."""
    best = ident
    at = -1
    d0, d1, d2 = geo[0, 1], geo[1, 1], geo[2, 1]
    a0, a1 = _taps(a, geo[0, 0], d0, geo[0, 2], geo[0, 3], geo[0, 4])
    b0, b1 = _taps(b, geo[1, 0], d1, geo[1, 2], geo[1, 3], geo[1, 4])
    c0, c1 = _taps(c, geo[2, 0], d2, geo[2, 2], geo[2, 3], geo[2, 4])
    for ta in range(a0, a1):
        u = u0 + ta * d0
        for tb in range(b0, b1):
            v = v0 + tb * d1
            for tc in range(c0, c1):
                w = w0 + tc * d2
                val = x[u, v, w]
                if at < 0 or _take(best, val):
                    best = val
                    at = u * m0 + v * m1 + w * m2
    yr[c] = best
    ir[c] = base + at if at >= 0 else -1


# One function on purpose: its row as a function of its own cost 2-14% of run time, inlined it
# made the compile far longer, and one plane per call made the compile 1.1 s longer.
@njit(**_OPTS)
def max_indices(src, y, ind, geo, mult, first_plane, plane_size, ident):
    """Y and Indices over (planes, D, H, W); ``geo`` per axis: s, d, pb, n, k, jl, jh."""
    od, oh, ow = y.shape[1], y.shape[2], y.shape[3]
    s0, d0, pb0 = geo[0, 0], geo[0, 1], geo[0, 2]
    s1, d1, pb1 = geo[1, 0], geo[1, 1], geo[1, 2]
    s2, pb2, d2 = geo[2, 0], geo[2, 2], geo[2, 1]
    k0, k1, k2 = geo[0, 4], geo[1, 4], geo[2, 4]
    al, ah, bl, bh, cl, ch = geo[0, 5], geo[0, 6], geo[1, 5], geo[1, 6], geo[2, 5], geo[2, 6]
    m0, m1, m2 = mult[0], mult[1], mult[2]
    unit = d0 == 1 and d1 == 1 and d2 == 1
    for p in range(src.shape[0]):
        base = (first_plane + p) * plane_size
        x = src[p]
        for a in range(od):
            u0 = a * s0 - pb0
            for b in range(oh):
                v0 = b * s1 - pb1
                yr = y[p, a, b]
                ir = ind[p, a, b]
                inside = al <= a < ah and bl <= b < bh
                # Outputs with a tap outside: the whole row, or the columns around [cl, ch).
                lo, hi = (cl, ch) if inside and cl < ch else (ow, ow)
                for c in range(lo):
                    _edge_output(x, yr, ir, u0, v0, c * s2 - pb2, a, b, c, geo, m0, m1, m2,
                                 ident, base)
                for c in range(hi, ow):
                    _edge_output(x, yr, ir, u0, v0, c * s2 - pb2, a, b, c, geo, m0, m1, m2,
                                 ident, base)
                if inside and cl < ch:
                    if unit and k0 == 1 and k1 <= 3:
                        if k1 == 2 and k2 == 2 and s2 == 2:
                            _window_rows(x, yr, ir, u0, v0, cl, ch, 2, pb2, 2, 2, m0, m1, m2, base)
                        elif k1 == 3 and k2 == 3 and s2 == 2:
                            _window_rows(x, yr, ir, u0, v0, cl, ch, 2, pb2, 3, 3, m0, m1, m2, base)
                        elif k1 == 3 and k2 == 3 and s2 == 1:
                            _window_rows(x, yr, ir, u0, v0, cl, ch, 1, pb2, 3, 3, m0, m1, m2, base)
                        elif k1 == 1 and k2 == 2 and s2 == 2:
                            _window_rows(x, yr, ir, u0, v0, cl, ch, 2, pb2, 1, 2, m0, m1, m2, base)
                        elif k1 == 1 and k2 == 3 and s2 == 2:
                            _window_rows(x, yr, ir, u0, v0, cl, ch, 2, pb2, 1, 3, m0, m1, m2, base)
                        else:
                            _window_rows(x, yr, ir, u0, v0, cl, ch, s2, pb2, k1, k2, m0, m1, m2,
                                         base)
                    elif unit and k0 == 2 and k1 == 2 and k2 == 2:
                        _window_row(x, yr, ir, u0, v0, cl, ch, s2, pb2, 2, 2, 2, 1, 1, 1, m0, m1,
                                    m2, base)
                    elif unit and k0 == 3 and k1 == 3 and k2 == 3:
                        _window_row(x, yr, ir, u0, v0, cl, ch, s2, pb2, 3, 3, 3, 1, 1, 1, m0, m1,
                                    m2, base)
                    else:
                        _window_row(x, yr, ir, u0, v0, cl, ch, s2, pb2, k0, k1, k2, d0, d1, d2, m0,
                                    m1, m2, base)


@njit(**_OPTS)
def scatter(y, x, idx):
    """``y[idx[j]] = x[j]`` in order; -1, or the position of the first index outside ``y``."""
    size = y.shape[0]
    for j in range(idx.shape[0]):
        k = idx[j]
        if k < 0 or k >= size:
            return j
        y[k] = x[j]
    return -1
