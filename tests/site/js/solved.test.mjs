// Unit tests of solved.js (the lookups behind perfect play and the action values), on tables
// built here by hand in the format harness/site/solved.py writes. The agreement of real
// tables with the solver is tested in Python and in the browser (tests/site/test_opponent.py).
// Run: node --test tests/site/js/
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  applyAction,
  formatAction,
  legalActions,
  parsePosition,
  parseRuleset,
  PopError,
} from "../../../harness/site/static/pop.js";
import {
  bestAction,
  OUTCOME_SHIFT,
  parseTable,
  ratedActions,
  siteKey,
  valueOf,
} from "../../../harness/site/static/solved.js";

const ID = "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump";
const rs = parseRuleset(ID);

// The 8 maps of the square, written out here rather than taken from the Python side.
function squareMaps(n) {
  const maps = [
    (r, c) => [r, c],
    (r, c) => [c, n - 1 - r],
    (r, c) => [n - 1 - r, n - 1 - c],
    (r, c) => [n - 1 - c, r],
    (r, c) => [r, n - 1 - c],
    (r, c) => [n - 1 - r, c],
    (r, c) => [c, r],
    (r, c) => [n - 1 - c, n - 1 - r],
  ];
  return maps.map((f) =>
    Array.from({ length: n * n }, (_, sq) => {
      const [r, c] = f(Math.floor(sq / n), sq % n);
      return r * n + c;
    }),
  );
}
const SYMS = squareMaps(3);

/** A table in the shipped format: entries [[key, outcome, plies], ...]. */
function table(entries, keyBytes = 4) {
  const sorted = [...entries].sort((a, b) => a[0] - b[0]);
  const n = sorted.length;
  const buffer = new ArrayBuffer(n * (keyBytes + 2));
  const view = new DataView(buffer);
  sorted.forEach(([key, outcome, plies], i) => {
    if (keyBytes === 4) view.setUint32(i * 4, key, true);
    else view.setFloat64(i * 8, key, true);
    view.setUint16(n * keyBytes + i * 2, (outcome << OUTCOME_SHIFT) | plies, true);
  });
  const meta = { ruleset: ID, classes: n, key_bytes: keyBytes, symmetries: SYMS };
  return parseTable(meta, buffer);
}

const empty = table([]);
const pos = (text) => parsePosition(rs, text);

function image(p, perm) {
  const board = new Array(9);
  p.board.forEach((v, sq) => {
    board[perm[sq]] = v;
  });
  return { board, bins: p.bins.slice(), toMove: p.toMove };
}

function colourSwap(p) {
  return {
    board: p.board.map((v) => (v === 0 ? 0 : 3 - v)),
    bins: [p.bins[1], p.bins[0]],
    toMove: 1 - p.toMove,
  };
}

describe("siteKey", () => {
  test("the empty board with full bins is key (0 * 4 + 3) * 4 + 3", () => {
    assert.equal(siteKey(empty, pos(".../.../... 3 3 x")), 15);
  });

  test("a mover's checker on a1 is the least image: base-3 digit 1 at square 0", () => {
    // x on c3 maps to a1 under the half turn; bins: x 2, o 3, x to move -> mover 2, other 3.
    assert.equal(siteKey(empty, pos(".../.../..x 2 3 x")), (1 * 4 + 2) * 4 + 3);
    // Seen from o (to move), x's checker is the opponent's: digit 2.
    assert.equal(siteKey(empty, pos(".../.../..x 2 3 o")), (2 * 4 + 3) * 4 + 2);
  });

  test("every symmetric image and the colour swap share a key", () => {
    const samples = ["xo./.x./..o 1 1 x", "x.o/o../.xx 0 1 o", ".o./x.x/o.. 1 1 o"];
    for (const text of samples) {
      const p = pos(text);
      const key = siteKey(empty, p);
      for (const perm of SYMS) {
        assert.equal(siteKey(empty, image(p, perm)), key, `${text} under ${perm}`);
        assert.equal(siteKey(empty, colourSwap(image(p, perm))), key);
      }
    }
  });

  test("different positions get different keys", () => {
    const keys = new Set(
      ["x../.../... 2 3 o", "xo./.../... 2 2 x", "x.o/.../... 2 2 x", "x../.o./... 2 2 x"].map(
        (t) => siteKey(empty, pos(t)),
      ),
    );
    assert.equal(keys.size, 4);
  });
});

describe("parseTable and valueOf", () => {
  test("values are read from the mover's side", () => {
    const start = pos(".../.../... 3 3 x");
    const t = table([[siteKey(empty, start), 1, 7]]);
    assert.deepEqual(valueOf(t, start), { winner: "x", plies: 7 });
    // The same class with o to move (colours swapped): o, the mover, wins.
    assert.deepEqual(valueOf(t, colourSwap(start)), { winner: "o", plies: 7 });
    const lost = table([[siteKey(empty, start), 2, 4]]);
    assert.deepEqual(valueOf(lost, start), { winner: "o", plies: 4 });
    const drawn = table([[siteKey(empty, start), 0, 0]], 8);
    assert.deepEqual(valueOf(drawn, start), { winner: "draw", plies: null });
  });

  test("a position missing from the table has no value", () => {
    const t = table([[15, 1, 7]]);
    assert.equal(valueOf(t, pos("x../.../... 2 3 o")), null);
  });

  test("a table of the wrong length is refused with one line", () => {
    const meta = { ruleset: ID, classes: 2, key_bytes: 4, symmetries: SYMS };
    assert.throws(() => parseTable(meta, new ArrayBuffer(10)), PopError);
    assert.throws(() => parseTable({ ...meta, key_bytes: 3 }, new ArrayBuffer(10)), /key width/);
  });
});

describe("ratedActions and bestAction", () => {
  // x to move with x on a1 and b1 (bins empty under binempty: x moves). Give every non-ending
  // successor a made-up value and check the ranking: fastest win, then draw, then slowest loss.
  const here = pos("xx./oo./... 1 1 x");

  function rated(values) {
    const entries = [];
    for (const action of legalActions(rs, here)) {
      const turn = applyAction(rs, here, action);
      if (turn.result !== null) continue;
      const text = formatAction(rs, action);
      const [outcome, plies] = values(text);
      entries.push([siteKey(empty, turn.next), outcome, plies]);
    }
    // Two actions can reach the same class; keep one entry per key.
    const unique = [...new Map(entries.map((e) => [e[0], e])).values()];
    return table(unique);
  }

  test("an action that ends the game is rated from its result", () => {
    const t = rated(() => [1, 3]); // after x's action o is to move and "wins in 3"
    const list = ratedActions(t, here);
    const c1 = list.find((r) => r.text === "c1"); // x completes a1 b1 c1
    assert.deepEqual([c1.winner, c1.plies], ["x", 1]);
    const others = list.filter((r) => applyAction(rs, here, r.action).result === null);
    for (const r of others) assert.deepEqual([r.winner, r.plies], ["o", 4]);
    assert.equal(bestAction(t, here).text, "c1");
  });

  test("without a win at once: the fastest win, else a draw, else the slowest loss", () => {
    // From the empty board no placement ends the game. Corners, edges and the centre are three
    // classes (moves never wrap, so the torus's translations are not symmetries).
    const p = pos(".../.../... 3 3 x");
    const cls = { a1: "corner", c1: "corner", a3: "corner", c3: "corner", b2: "centre" };
    const kind = (text) => cls[text] ?? "edge";
    const build = (values) => {
      const entries = new Map();
      for (const action of legalActions(rs, p)) {
        const text = formatAction(rs, action);
        const key = siteKey(empty, applyAction(rs, p, action).next);
        entries.set(key, [key, ...values[kind(text)]]);
      }
      assert.equal(entries.size, 3);
      return table([...entries.values()]);
    };
    // Values from o's side (o is to move after x's placement): 1 o wins, 2 o loses, 0 draw.
    let t = build({ corner: [1, 2], edge: [1, 6], centre: [0, 0] });
    assert.equal(bestAction(t, p).text, "b2");
    assert.deepEqual(
      ratedActions(t, p).map((r) => [r.text, r.winner, r.plies]).slice(0, 2),
      [["a1", "o", 3], ["b1", "o", 7]],
    );
    t = build({ corner: [1, 2], edge: [1, 6], centre: [1, 4] });
    assert.equal(bestAction(t, p).text, "b1"); // the slowest loss, first in legal order
    t = build({ corner: [2, 5], edge: [2, 3], centre: [0, 0] });
    const best = bestAction(t, p);
    assert.deepEqual([best.text, best.winner, best.plies], ["b1", "x", 4]);
  });

  test("a successor missing from the table makes the position unrated", () => {
    assert.equal(ratedActions(empty, here), null);
    assert.equal(bestAction(empty, here), null);
  });
});
