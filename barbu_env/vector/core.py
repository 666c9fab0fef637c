"""The batched deal engine: state arrays, legality and transitions for B deals at once (RULES.md R3-R8).

The state is a :class:`State` of arrays with the game on axis 0; hands and every card set are
``uint64`` bitmasks (bit = card id, R1.2). Legality (:func:`legal_words`) and transitions
(:func:`apply`) are whole-batch array operations: the only Python loop is over the phases present
(declare, double, trick play, Fantan), never over games. Each transition mirrors the reference
``engine.deal.Deal`` step for step, which the differential tests check.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..actions import DECLARE_BASE, DOUBLE_BASE, PASS
from .tables import (
    ABOVE,
    AH,
    DECLARE,
    DOUBLE,
    DOUBLE_SUBSETS_ARR,
    FANTAN_PLAY,
    HEARTS_ID,
    KH,
    KH_ID,
    NON_HEARTS,
    NOT_ACES,
    NOT_TWOS,
    NUM_DECL,
    ONE,
    OVER,
    PASS_BIT,
    PLAY,
    RANK_CARDS,
    REL_TO_ABS_ARR,
    SUIT,
    U64,
    Tables,
    xp,
)

I64 = np.int64
ZERO = U64(0)


def popcount(x: np.ndarray) -> np.ndarray:
    """Set bits per element (``torch``: a bit-trick popcount or a byte table)."""
    return xp.bitwise_count(x).astype(I64)


def bit(c: np.ndarray) -> np.ndarray:
    """``1 << c`` as uint64 for int card ids."""
    return xp.left_shift(ONE, c.astype(U64))


@dataclass
class State:
    """B deals; seat-indexed arrays are ``[B, 4]`` by absolute seat. Scalars use -1 for "none"."""

    hands: np.ndarray  # u64 [B,4]
    played_by: np.ndarray  # u64 [B,4] cards each seat played this deal
    captured: np.ndarray  # u64 [B,4] cards in the tricks each seat won (R5.3)
    excluded: np.ndarray  # u64 [B,4] cards each seat has shown it cannot hold
    trick_by: np.ndarray  # u64 [B,4] the card each seat played to the trick in progress
    played: np.ndarray  # u64 [B]
    trick_mask: np.ndarray  # u64 [B]
    playable: np.ndarray  # u64 [B] Fantan table (R7.2)
    tricks_won: np.ndarray  # i64 [B,4]
    points: np.ndarray  # i64 [B,4] running contract points
    passes: np.ndarray  # i64 [B,4]
    doubles: np.ndarray  # i64 [B,4] mask of the absolute seats each seat doubled (R6)
    fin_place: np.ndarray  # i64 [B,4] Fantan finishing place, -1 while in (R7.4)
    scores: np.ndarray  # i64 [B,4] deal scores once over (R8.1)
    phase: np.ndarray  # i64 [B]
    to_move: np.ndarray
    declarer: np.ndarray
    leader: np.ndarray
    led: np.ndarray
    best: np.ndarray
    winner: np.ndarray
    top_trump: np.ndarray
    trick_len: np.ndarray
    trick_no: np.ndarray
    contract: np.ndarray  # row of the contract table, -1 until declared
    trump: np.ndarray
    fantan_rank: np.ndarray
    double_step: np.ndarray
    must_double: np.ndarray  # seat mask (R6.4)
    num_fin: np.ndarray
    avail_decl: np.ndarray  # i64 [B] mask over the 26 declaration actions (R3.1)
    avail_names: np.ndarray  # i64 [B] mask over CONTRACT_NAMES (the observation's available block)
    pass_run: np.ndarray  # i64 [B] Fantan passes since the last card played (the trailing passes of the history)
    hearts_broken: np.ndarray  # bool [B]

    cards4: np.ndarray | None = None  # u64 [B,5,4]: hands, played_by, trick_by, captured, excluded
    ints4: np.ndarray | None = None  # i64 [B,5,4]: tricks_won, points, passes, doubles, fin_place
    words: np.ndarray | None = None  # u64 [3,B]: played, trick_mask, playable
    scalars: np.ndarray | None = None  # i64 [S,B]: the int fields of SCALAR_FIELDS

    @classmethod
    def zeros(cls, batch: int) -> State:
        """All-zero state. The fields are views into four blocks: per-seat ``[B, 5, 4]`` (so that the
        observation rotates them to the observer with one gather each) and per-game ``[F, B]`` (one row
        per field, contiguous); a compiled backend works on the blocks (:meth:`blocks`)."""
        blocks = {
            "cards4": xp.zeros((batch, len(CARD_SEAT_FIELDS), 4), U64),
            "ints4": xp.zeros((batch, len(INT_SEAT_FIELDS), 4), I64),
            "words": xp.zeros((len(WORD_FIELDS), batch), U64),
            "scalars": xp.zeros((len(SCALAR_FIELDS), batch), I64),
        }
        kw: dict[str, np.ndarray] = {}
        for block, names in (("cards4", CARD_SEAT_FIELDS), ("ints4", INT_SEAT_FIELDS)):
            for i, name in enumerate(names):
                kw[name] = blocks[block][:, i, :]
        for block, names in (("words", WORD_FIELDS), ("scalars", SCALAR_FIELDS)):
            for i, name in enumerate(names):
                kw[name] = blocks[block][i]
        kw["scores"] = xp.zeros((batch, 4), I64)
        kw["hearts_broken"] = xp.zeros(batch, bool)
        return cls(**kw, **blocks)

    def blocks(self) -> tuple[np.ndarray, ...]:
        """``(cards4, ints4, words, scalars, hearts_broken, scores)``: every array of the state, once."""
        return self.cards4, self.ints4, self.words, self.scalars, self.hearts_broken, self.scores

    def nbytes(self) -> int:
        """Bytes of all state arrays."""
        return sum(a.nbytes for a in self.blocks())


#: Order of the per-seat arrays in the stacked blocks (the observation reads them in this order).
CARD_SEAT_FIELDS = ("hands", "played_by", "trick_by", "captured", "excluded")
INT_SEAT_FIELDS = ("tricks_won", "points", "passes", "doubles", "fin_place")
#: Rows of the per-game blocks.
WORD_FIELDS = ("played", "trick_mask", "playable")
SCALAR_FIELDS = ("phase", "to_move", "declarer", "leader", "led", "best", "winner", "top_trump", "trick_len",
                 "trick_no", "contract", "trump", "fantan_rank", "double_step", "must_double", "num_fin",
                 "avail_decl", "avail_names", "pass_run")  # fmt: skip
#: The scalars of a fresh deal before its set-up: "none" (-1) where the trick is empty, else 0 (DECLARE).
SCALAR_START = np.array([-1 if n in ("led", "best", "winner", "top_trump") else 0 for n in SCALAR_FIELDS], np.int64)


# ------------------------------------------------------------------------------------------ legality
def legal_cards(st: State, t: Tables) -> np.ndarray:
    """u64 [B]: cards the seat on move may play (R4.1, R4.4, R5.1, R5.4, R5.5; Fantan R7.2); 0 elsewhere."""
    b = xp.arange(st.phase.shape[0])
    p = st.to_move
    hand = st.hands[b, p]
    k = xp.maximum(st.contract, 0)
    trump = st.trump
    led = st.led
    top = st.top_trump
    trump_m = SUIT[trump]
    # leading (R4.1, R5.4)
    restrict = t.hearts_rule[k] & ~(st.hearts_broken & t.until_broken)
    nh = hand & NON_HEARTS
    m_lead = xp.where(restrict & (nh != 0), nh, hand)
    if t.must_lead_trump:
        tl = m_lead & trump_m
        m_lead = xp.where(tl != 0, tl, m_lead)
    # following (R5.1, R5.5, R4.4)
    fk = t.force_king[k]
    has_kh = (hand & KH) != 0
    f = hand & SUIT[led]
    above_top = ABOVE[top]
    m_f = f
    if t.overtrump:
        hi = f & above_top
        m_f = xp.where((led == trump) & (top >= 0) & (hi != 0), hi, m_f)
    m_f = xp.where(fk & (led == HEARTS_ID) & has_kh & ((st.trick_mask & AH) != 0), KH, m_f)
    tr = hand & trump_m
    hi_t = tr & above_top
    m_void = xp.where(fk & has_kh, KH, hand)
    if t.overtrump:
        m_trump = xp.where(top < 0, tr, xp.where(hi_t != 0, hi_t, hand))
    else:
        m_trump = xp.where(top < 0, tr, xp.where(hi_t != 0, tr, hand))
    m_void = xp.where(tr != 0, m_trump, m_void)
    m_follow = xp.where(f != 0, m_f, m_void)
    m_play = xp.where(led < 0, m_lead, m_follow)
    m_fantan = hand & st.playable
    phase = st.phase
    return xp.where(phase == PLAY, m_play, xp.where(phase == FANTAN_PLAY, m_fantan, ZERO))


def legal_doubles(st: State, t: Tables) -> np.ndarray:
    """i64 [B]: mask over the 8 doubling actions of the seat on move (R6.2-R6.4, R6.7); 0 outside DOUBLE."""
    out = xp.zeros(st.phase.shape[0], I64)
    g = xp.flatnonzero(st.phase == DOUBLE)
    if not g.size:
        return out
    s = st.to_move[g]
    d = st.declarer[g]
    k = st.contract[g]
    is_decl = s == d
    rd = (d - s) & 3  # declarer's relative seat (1..3) for a non-declarer
    decl_rel = xp.left_shift(1, xp.maximum(rd - 1, 0))
    wide = ~(t.positive[k] | t.declarer_only)
    allowed_nd = xp.where(wide, 7, decl_rel)
    # declarer: relative mask of the seats that doubled the declarer (redoubles only, R6.2)
    dbl = st.doubles[g]
    rows = xp.arange(g.shape[0])
    doubled_me = 0
    for i in range(3):
        q = (s + 1 + i) & 3
        doubled_me = doubled_me | xp.where((dbl[rows, q] >> d) & 1 == 1, 1 << i, 0)
    allowed = xp.where(is_decl, doubled_me, allowed_nd)
    must = (~is_decl) & (((st.must_double[g] >> s) & 1) == 1)
    m = DOUBLE_SUBSETS_ARR[None, :]
    ok = (m & ~allowed[:, None]) == 0
    if t.declarer_only:
        ok &= ~is_decl[:, None] | (m == 0) | (m == allowed[:, None])
    ok &= ~must[:, None] | ((m & decl_rel[:, None]) != 0)
    out[g] = (ok.astype(I64) << xp.arange(8)).sum(axis=1)
    return out


def legal_words(st: State, t: Tables) -> tuple[np.ndarray, np.ndarray]:
    """The legal actions as two words per game: u64 ``low`` (bit a for a in 0..52: cards, pass) and
    u64 ``high`` (bit a - 53 for a in 53..86: declarations, doubles)."""
    cards = legal_cards(st, t)
    fantan = st.phase == FANTAN_PLAY
    pass_ok = fantan & ((cards == 0) | t.fantan_free_pass)  # R7.3
    low = cards | xp.where(pass_ok, ONE << U64(PASS_BIT), ZERO)
    decl = xp.where(st.phase == DECLARE, st.avail_decl, 0)
    high = (decl | (legal_doubles(st, t) << NUM_DECL)).astype(U64)
    return low, high


def is_legal(low: np.ndarray, high: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """bool [B]: whether each action is set in the legal words."""
    a = actions.astype(I64)
    in_range = (a >= 0) & (a < DOUBLE_BASE + 8)
    a = xp.where(in_range, a, 0)
    lo = (low >> xp.minimum(a, 63).astype(U64)) & ONE
    hi = (high >> xp.maximum(a - DECLARE_BASE, 0).astype(U64)) & ONE
    return in_range & (xp.where(a < DECLARE_BASE, lo, hi) == ONE)


# ------------------------------------------------------------------------------------------ transitions
def apply(st: State, t: Tables, actions: np.ndarray) -> np.ndarray:
    """Apply one (legal, already checked) action per game on move; returns the games that ended."""
    phase = st.phase.copy()  # each game moves once, in the phase it was in
    over = []
    for ph, fn in ((PLAY, _play), (FANTAN_PLAY, _fantan), (DOUBLE, _double), (DECLARE, _declare)):
        g = xp.flatnonzero(phase == ph)
        if g.size:
            ended = fn(st, t, g, actions[g].astype(I64))
            if ended.size:
                over.append(ended)
    if not over:
        return xp.zeros(0, I64)
    return xp.concatenate(over) if len(over) > 1 else over[0]


def _play(st: State, t: Tables, g: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Trick play (R5): a card to the trick, what it proves, the winner so far, trick completion."""
    p = st.to_move[g]
    bt = bit(c)
    st.hands[g, p] ^= bt
    st.played[g] |= bt
    st.played_by[g, p] |= bt
    st.trick_by[g, p] = bt
    suit = c // 13
    k = st.contract[g]
    trump = st.trump[g]
    led = st.led[g]
    top = st.top_trump[g]
    best = st.best[g]
    lead = st.trick_len[g] == 0
    fk = t.force_king[k]
    # what the card proves (the lead and follow inferences of Deal.apply and Deal._infer_follow)
    restrict = t.hearts_rule[k] & ~(st.hearts_broken[g] & t.until_broken)
    ex_lead = xp.where((suit == HEARTS_ID) & restrict, NON_HEARTS, ZERO)
    if t.must_lead_trump:
        ex_lead |= xp.where((trump >= 0) & (suit != trump), SUIT[trump], ZERO)
    off = suit != led
    not_kh = c != KH_ID
    ex_off = SUIT[led] | xp.where((trump >= 0) & (suit != trump), xp.where(top < 0, SUIT[trump], ABOVE[top]), ZERO)
    ex_off |= xp.where(fk & not_kh, KH, ZERO)
    ex_on = xp.where(fk & (led == HEARTS_ID) & ((st.trick_mask[g] & AH) != 0) & not_kh, KH, ZERO)
    ex_f = xp.where(off, ex_off, ex_on)
    if t.overtrump:
        ex_f |= xp.where((suit == trump) & (top >= 0) & (c < top), ABOVE[top], ZERO)
    st.excluded[g, p] |= xp.where(lead, ex_lead, ex_f)
    # trick state (R5.2)
    better = lead | ((suit == best // 13) & (c > best)) | ((suit == trump) & (best // 13 != trump))
    st.best[g] = xp.where(better, c, best)
    st.winner[g] = xp.where(better, p, st.winner[g])
    st.top_trump[g] = xp.where((suit == trump) & (c > top), c, top)
    st.hearts_broken[g] |= ~lead & (suit == HEARTS_ID) & (led != HEARTS_ID)
    st.led[g] = xp.where(lead, suit, led)
    st.leader[g] = xp.where(lead, p, st.leader[g])
    st.trick_mask[g] |= bt
    n = st.trick_len[g] + 1
    st.trick_len[g] = n
    done = n == 4
    st.to_move[g] = xp.where(done, p, (p + 1) & 3)
    if not done.any():
        return xp.zeros(0, I64)
    h = g[done]
    return _end_trick(st, t, h)


def _end_trick(st: State, t: Tables, h: np.ndarray) -> np.ndarray:
    """A complete trick (R5.2, R5.3): score it, hand it to the winner, maybe end the deal (R4.2, R4.3)."""
    w = st.winner[h]
    k = st.contract[h]
    tm = st.trick_mask[h]
    no = st.trick_no[h]
    pts = t.per_trick[k] + t.pos_vals[k, no]
    pts = pts + (t.cp_pts[k] * popcount(tm[:, None] & t.cp_mask[k])).sum(axis=1)
    st.points[h, w] += pts
    st.captured[h, w] |= tm
    st.tricks_won[h, w] += 1
    st.trick_no[h] = no + 1
    st.trick_by[h] = ZERO
    st.trick_mask[h] = ZERO
    st.trick_len[h] = 0
    st.led[h] = -1
    st.best[h] = -1
    st.winner[h] = -1
    st.top_trump[h] = -1
    st.leader[h] = w
    st.to_move[h] = w
    end = t.end_mask[k]
    fin = (no + 1 == t.hand_size) | ((end != 0) & ((st.played[h] & end) == end))
    e = h[fin]
    if e.size:
        _finish(st, t, e)
    return e


def _fantan(st: State, t: Tables, g: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Fantan (R7): play a card onto the table or pass; finishing order; next player."""
    p = st.to_move[g]
    card = a != PASS
    # passes (R7.3)
    gp, pp = g[~card], p[~card]
    st.pass_run[g] = xp.where(card, 0, st.pass_run[g] + 1)
    if gp.size:
        st.passes[gp, pp] += 1
        if not t.fantan_free_pass:
            st.excluded[gp, pp] |= st.playable[gp]
    # cards (R7.2)
    gc, pc, c = g[card], p[card], a[card]
    again = xp.zeros(g.shape, bool)
    ended = xp.zeros(0, I64)
    if gc.size:
        bt = bit(c)
        st.hands[gc, pc] ^= bt
        played = st.played[gc] | bt
        st.played[gc] = played
        st.played_by[gc, pc] |= bt
        neigh = ((bt >> ONE) & NOT_ACES & t.deck) | ((bt << ONE) & NOT_TWOS & t.deck)
        st.playable[gc] = (st.playable[gc] & ~bt) | (neigh & ~played)
        out = st.hands[gc, pc] == 0
        go, po = gc[out], pc[out]
        if go.size:  # R7.4: finishing order
            st.fin_place[go, po] = st.num_fin[go]
            st.num_fin[go] += 1
            last = go[st.num_fin[go] == 3]
            if last.size:
                fp = st.fin_place[last]
                st.fin_place[last] = xp.where(fp < 0, 3, fp)
                st.num_fin[last] = 4
                _finish(st, t, last)
                ended = last
        if t.ace_again:  # R7.5
            ag = xp.zeros(g.shape, bool)
            ag[card] = (c % 13 == 12) & ~out
            again = ag
    live = (st.phase[g] != OVER) & ~again
    gn, pn = g[live], p[live]
    if gn.size:
        st.to_move[gn] = _next_in(st, gn, pn)
    return ended


def _next_in(st: State, g: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The next seat clockwise from ``p`` that still holds cards (R7.4)."""
    hands = st.hands[g]
    rows = xp.arange(g.shape[0])
    q1, q2, q3 = (p + 1) & 3, (p + 2) & 3, (p + 3) & 3
    return xp.where(hands[rows, q1] != 0, q1, xp.where(hands[rows, q2] != 0, q2, q3))


def _declare(st: State, t: Tables, g: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The declaration (R3): contract, trump suit or Fantan rank; then doubling or play."""
    i = a - DECLARE_BASE
    st.contract[g] = t.decl_k[i]
    st.trump[g] = t.decl_trump[i]
    st.fantan_rank[g] = t.decl_rank[i]
    if t.doubling_off:
        _start_play(st, t, g)
    else:
        st.phase[g] = DOUBLE
        st.double_step[g] = 0
        st.to_move[g] = (st.declarer[g] + 1) & 3
    return xp.zeros(0, I64)


def _double(st: State, t: Tables, g: np.ndarray, a: np.ndarray) -> np.ndarray:
    """One doubling decision (R6.1); after the declarer's: R6.6 split or play."""
    s = st.to_move[g]
    st.doubles[g, s] = REL_TO_ABS_ARR[s, a - DOUBLE_BASE]
    step = st.double_step[g] + 1
    st.double_step[g] = step
    more = step < 4
    gm = g[more]
    st.to_move[gm] = (st.declarer[gm] + 1 + step[more]) & 3
    gd = g[~more]
    if not gd.size:
        return xp.zeros(0, I64)
    if t.split:
        k = st.contract[gd]
        none = (~t.positive[k]) & (st.doubles[gd].sum(axis=1) == 0)
        gs = gd[none]
        if gs.size:  # R6.6: the deal is not played
            share = t.total[st.contract[gs]] // 3
            sc = xp.repeat(share[:, None], 4, axis=1)
            rows = xp.arange(gs.shape[0])
            sc[rows, st.declarer[gs]] = t.total[st.contract[gs]] - 3 * share
            st.scores[gs] = sc
            st.phase[gs] = OVER
        _start_play(st, t, gd[~none])
        return gs
    _start_play(st, t, gd)
    return xp.zeros(0, I64)


def start(st: State, t: Tables, g: np.ndarray, hands: np.ndarray, declarer: np.ndarray, must_double: np.ndarray | int,
          specs: np.ndarray) -> None:  # fmt: skip
    """Fresh deals in games ``g`` (``Deal.from_hands``): ``hands`` uint64 [n, 4], ``declarer`` [n], R6.4
    ``must_double`` seat masks; ``specs[g % len(specs)]`` is the game's (contract row or -1, trump, rank,
    declaration-action mask, available-names mask). A fixed contract is declared at once (``Deal.declare``)."""
    st.cards4[g] = 0
    st.ints4[g] = 0
    st.fin_place[g] = -1
    st.words[:, g] = 0
    st.scalars[:, g] = SCALAR_START[:, None]
    st.scores[g] = 0
    st.hearts_broken[g] = False
    st.hands[g] = hands
    st.declarer[g] = declarer
    st.leader[g] = declarer
    st.to_move[g] = declarer
    st.must_double[g] = must_double
    spec = specs[g % specs.shape[0]]
    k = spec[:, 0]
    st.contract[g] = k
    st.trump[g] = spec[:, 1]
    st.fantan_rank[g] = spec[:, 2]
    st.avail_decl[g] = spec[:, 3]
    st.avail_names[g] = spec[:, 4]
    st.phase[g] = DECLARE
    fixed = g[k >= 0]
    if fixed.size:  # declared at once: doubling (R6) or play
        if t.doubling_off:
            _start_play(st, t, fixed)
        else:
            st.phase[fixed] = DOUBLE
            st.to_move[fixed] = (st.declarer[fixed] + 1) & 3


def _start_play(st: State, t: Tables, g: np.ndarray) -> None:
    """R2.3: the declarer leads (plays first in Fantan)."""
    if not g.size:
        return
    d = st.declarer[g]
    st.to_move[g] = d
    st.leader[g] = d
    fan = t.fantan[st.contract[g]]
    st.phase[g] = xp.where(fan, FANTAN_PLAY, PLAY)
    st.playable[g] = xp.where(fan, RANK_CARDS[xp.maximum(st.fantan_rank[g], 0)] & t.deck, ZERO)


def _finish(st: State, t: Tables, g: np.ndarray) -> None:
    """Score finished deals (R4, R7.4, R9.1, R6.5, R8.1)."""
    k = st.contract[g]
    fan = t.fantan[k]
    cs = st.points[g].copy()
    rav = t.ravage[k]
    if (rav != 0).any():  # R9.1: the largest single-suit count shares the penalty
        counts = popcount(st.captured[g][:, :, None] & SUIT[None, None, :4]).max(axis=2)
        losers = counts == counts.max(axis=1, keepdims=True)
        share = rav // losers.sum(axis=1)
        cs += xp.where(losers, share[:, None], 0)
    fp = xp.take_along_axis(t.fantan_pts[k], xp.maximum(st.fin_place[g], 0), axis=1)
    cs = xp.where(fan[:, None], fp, cs)
    # R6.5: out[i] = sum_j k_ij (s_i - s_j), k_ij = directions doubled between i and j
    dbl = st.doubles[g]
    seats = xp.arange(4)
    kd = (dbl[:, :, None] >> seats[None, None, :]) & 1  # kd[i, j]: i doubled j
    kk = kd + kd.transpose(0, 2, 1)
    settle = (kk * (cs[:, :, None] - cs[:, None, :])).sum(axis=2)
    st.scores[g] = cs + settle
    st.phase[g] = OVER


__all__ = ["State", "apply", "bit", "is_legal", "legal_cards", "legal_doubles", "legal_words", "popcount", "start"]
