// Unit tests of the browser engine, one or more per rule branch, with positions in notation.
// Run: node --test tests/site/js/
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  applyAction,
  DEFAULT_RULESET_ID,
  findLines,
  formatAction,
  formatPosition,
  formatRuleset,
  Game,
  initialPosition,
  legalActions,
  parseAction,
  parsePosition,
  parseRuleset,
  PopError,
  resolveStuck,
  step,
} from "../../../harness/site/static/pop.js";

const rid = (edge, extra = {}) => {
  const f = {
    board: "5x5",
    checkers: "c8",
    stuck: "continue",
    movement: "binempty",
    pattern: "king",
    zero: "nozero",
    jumps: "nojump",
    ...extra,
  };
  return `pop1-${f.board}-${f.checkers}-${edge}-${f.stuck}-${f.movement}-${f.pattern}-${f.zero}-${f.jumps}`;
};

/** Play one action and return {next (text), result, branches}. */
function turn(id, position, action, history = []) {
  const rs = parseRuleset(id);
  const out = applyAction(rs, parsePosition(rs, position), parseAction(rs, action), history);
  return { next: formatPosition(rs, out.next), result: out.result, branches: out.branches };
}

function actionSet(id, position) {
  const rs = parseRuleset(id);
  return new Set(legalActions(rs, parsePosition(rs, position)).map((a) => formatAction(rs, a)));
}

describe("ruleset identifiers", () => {
  test("round trip of every field", () => {
    for (const id of [
      DEFAULT_RULESET_ID,
      "pop1-3x8-c16-klein-draw-always-anywhere-zero-jump",
      "pop1-8x3-c3-ringout-continue-nomove-bishop-nozero-jump",
    ]) {
      assert.equal(formatRuleset(parseRuleset(id)), id);
    }
  });

  test("errors name the field", () => {
    const cases = [
      ["pop2-6x6-c8-torus-continue-binempty-king-nozero-nojump", /version/],
      ["pop1-9x6-c8-torus-continue-binempty-king-nozero-nojump", /board/],
      ["pop1-6x2-c8-torus-continue-binempty-king-nozero-nojump", /board/],
      ["pop1-6x6-c2-torus-continue-binempty-king-nozero-nojump", /checkers/],
      ["pop1-6x6-c17-torus-continue-binempty-king-nozero-nojump", /checkers/],
      ["pop1-6x6-c08-torus-continue-binempty-king-nozero-nojump", /checkers/],
      ["pop1-6x6-c8-mobius-continue-binempty-king-nozero-nojump", /edge/],
      ["pop1-6x6-c8-torus-wait-binempty-king-nozero-nojump", /stuck/],
      ["pop1-6x6-c8-torus-continue-sometimes-king-nozero-nojump", /movement/],
      ["pop1-6x6-c8-torus-continue-binempty-knight-nozero-nojump", /pattern/],
      ["pop1-6x6-c8-torus-continue-binempty-king-maybe-nojump", /zero/],
      ["pop1-6x6-c8-torus-continue-binempty-king-nozero-hop", /jumps/],
      ["pop1-6x6-c8-torus", /expected 9 fields/],
    ];
    for (const [id, re] of cases) {
      assert.throws(() => parseRuleset(id), (e) => e instanceof PopError && re.test(e.message));
    }
  });
});

describe("notation", () => {
  const id = rid("torus");
  test("position round trip and the initial position", () => {
    const rs = parseRuleset(id);
    const text = "x..../..o../...../...../....x 6 7 o";
    assert.equal(formatPosition(rs, parsePosition(rs, text)), text);
    assert.equal(
      formatPosition(rs, initialPosition(rs)),
      "...../...../...../...../..... 8 8 x",
    );
  });

  test("a1 is the top-left square", () => {
    const rs = parseRuleset(id);
    assert.deepEqual(parseAction(rs, "a1"), { from: null, to: 0 });
    assert.deepEqual(parseAction(rs, "e1-a5"), { from: 4, to: 20 });
    assert.equal(formatAction(rs, { from: 6, to: 6 }), "b2-b2");
  });

  test("malformed positions are rejected with the reason", () => {
    const rs = parseRuleset(id);
    const bad = [
      ["...../...../...../..... 8 8 x", /5 rows/],
      ["...../...../...../...../.... 8 8 x", /row 5/],
      ["...../...../..z../...../..... 8 8 x", /unknown character 'z'/],
      ["...../...../...../...../..... -1 8 x", /not a non-negative integer/],
      ["...../...../...../...../..... 9 8 x", /exceeds/],
      ["x..../...../...../...../..... 8 8 o", /more than/],
      ["...../...../...../...../..... 7 8 o", /removed/],
      ["...../...../...../...../..... 8 8 z", /player to move/],
      ["...../...../...../...../..... 8 8", /4 fields/],
    ];
    for (const [text, re] of bad) {
      assert.throws(() => parsePosition(rs, text), (e) => e instanceof PopError && re.test(e.message));
    }
    // Removed checkers are allowed under ringout only.
    parsePosition(parseRuleset(rid("ringout")), "...../...../...../...../..... 7 8 o");
  });

  test("malformed and off-board actions", () => {
    const rs = parseRuleset(id);
    assert.throws(() => parseAction(rs, "f1"), /off the 5x5 board/);
    assert.throws(() => parseAction(rs, "c3-"), /expected a placement/);
    assert.throws(() => parseAction(rs, "33"), /expected a placement/);
  });

  test("illegal actions are refused", () => {
    const rs = parseRuleset(id);
    const pos = parsePosition(rs, "x..../...../...../...../..... 7 8 o");
    assert.throws(() => applyAction(rs, pos, parseAction(rs, "a1")), /not legal/);
    assert.throws(() => applyAction(rs, pos, parseAction(rs, "a1-a2")), /not legal/);
  });
});

describe("edge surfaces", () => {
  test("non-wrapping edges end", () => {
    const rs = parseRuleset(rid("blocked"));
    assert.equal(step(rs, 0, 0, -1, 0), null);
    assert.equal(step(rs, 4, 4, 0, 1), null);
    assert.equal(step(rs, 2, 2, 1, 1).sq, 18);
  });

  test("torus wraps both ways without changing the direction", () => {
    const rs = parseRuleset(rid("torus"));
    const s = step(rs, 0, 0, -1, -1);
    assert.deepEqual([s.r, s.c, s.dr, s.dc, s.wrapped, s.twisted], [4, 4, -1, -1, true, false]);
  });

  test("klein mirrors the column and flips the direction across top and bottom", () => {
    const rs = parseRuleset(rid("klein", { board: "4x5" }));
    const up = step(rs, 0, 1, -1, 1); // (-1, 2) -> row 3, column 4 - 2 = 2, dc flips
    assert.deepEqual([up.r, up.c, up.dr, up.dc, up.twisted], [3, 2, -1, -1, true]);
    const side = step(rs, 2, 4, 0, 1); // left/right wrap plainly
    assert.deepEqual([side.r, side.c, side.dc, side.wrapped, side.twisted], [2, 0, 1, true, false]);
  });
});

describe("legal actions", () => {
  test("placement on every empty square while the bin is not empty", () => {
    const acts = actionSet(rid("torus"), "x..../...../...../...../..... 7 8 o");
    assert.equal(acts.size, 24);
    assert.ok(!acts.has("a1"));
  });

  test("binempty: moves only once the own bin is empty", () => {
    const id = rid("blocked", { checkers: "c3" });
    const pos = "xxo../o..../...../...../....x 0 1 x";
    const acts = actionSet(id, pos);
    // a1 and b1 and e5 are x's; king moves to empty neighbours on the plain grid.
    assert.deepEqual(
      [...acts].sort(),
      ["a1-b2", "b1-b2", "b1-c2", "e5-d4", "e5-d5", "e5-e4"],
    );
    assert.equal(actionSet(id, pos.replace(/ x$/, " o")).size, 20); // o still places
  });

  test("nomove never moves; always moves and places", () => {
    const pos = "x..../...../...../...../..... 7 8 x";
    assert.equal(actionSet(rid("blocked", { movement: "nomove" }), pos).size, 24);
    const acts = actionSet(rid("blocked", { movement: "always" }), pos);
    assert.equal(acts.size, 24 + 3);
  });

  test("movement never wraps, even on torus and klein", () => {
    for (const edge of ["torus", "klein"]) {
      const acts = actionSet(rid(edge, { checkers: "c3" }), "x..../...../...../..ooo/..xx. 0 0 x");
      assert.deepEqual([...acts].filter((a) => a.startsWith("a1")).sort(), ["a1-a2", "a1-b1", "a1-b2"]);
    }
  });

  test("sliding patterns stop at the first occupied square unless jump", () => {
    const pos = "x.o../...../o.o../...../.x.x. 0 0 x";
    const mk = (pattern, jumps) =>
      rid("blocked", { movement: "always", pattern, jumps, checkers: "c3" });
    const from = (acts) => [...acts].filter((a) => a.startsWith("a1-")).sort();
    assert.deepEqual(from(actionSet(mk("rook", "nojump"), pos)), ["a1-a2", "a1-b1"]);
    assert.deepEqual(from(actionSet(mk("rook", "jump"), pos)), [
      "a1-a2", "a1-a4", "a1-a5", "a1-b1", "a1-d1", "a1-e1",
    ]);
    assert.deepEqual(from(actionSet(mk("bishop", "nojump"), pos)), ["a1-b2"]);
    assert.deepEqual(from(actionSet(mk("bishop", "jump"), pos)), ["a1-b2", "a1-d4", "a1-e5"]);
    assert.equal(from(actionSet(mk("queen", "nojump"), pos)).length, 3);
    assert.equal(from(actionSet(mk("anywhere", "nojump"), pos)).length, 25 - 6);
  });

  test("zero adds the move to the own square", () => {
    const acts = actionSet(rid("torus", { checkers: "c3", zero: "zero" }), "x..../...../...../..ooo/..xx. 0 0 x");
    assert.ok(acts.has("a1-a1"));
    assert.ok(acts.has("c5-c5"));
    assert.ok(!actionSet(rid("torus", { checkers: "c3" }), "x..../...../...../..ooo/..xx. 0 0 x").has("a1-a1"));
  });
});

describe("a turn", () => {
  test("place and a plain push", () => {
    const r = turn(rid("blocked"), "...../..o../...../...../..... 8 7 x", "c3");
    assert.deepEqual(r, {
      next: "..o../...../..x../...../..... 7 7 o",
      result: null,
      branches: ["place", "push"],
    });
  });

  test("a target off the board: reincarnation, ringout, blocked", () => {
    const pos = "..o../...../...../...../..... 8 7 x";
    assert.deepEqual(turn(rid("reincarnation"), pos, "c2"), {
      next: "...../..x../...../...../..... 7 8 o",
      result: null,
      branches: ["fall_reincarnation", "place"],
    });
    assert.deepEqual(turn(rid("ringout"), pos, "c2"), {
      next: "...../..x../...../...../..... 7 7 o",
      result: null,
      branches: ["fall_ringout", "place"],
    });
    assert.deepEqual(turn(rid("blocked"), pos, "c2"), {
      next: "..o../..x../...../...../..... 7 7 o",
      result: null,
      branches: ["fall_blocked", "place"],
    });
  });

  test("a push fails on a target occupied in the snapshot", () => {
    const r = turn(rid("blocked"), "..x../..o../...../...../..... 7 7 x", "c3");
    assert.equal(r.next, "..x../..o../..x../...../..... 6 7 o");
    assert.deepEqual(r.branches, ["place", "push_blocked_occupied"]);
  });

  test("a target vacated by another push of the same pop still blocks", () => {
    // From c3, b3 pushes towards a3, which holds an o in the snapshot. a3 is not adjacent to
    // c3, so nothing moves it; the push fails even though pushes are applied together.
    const r = turn(rid("blocked"), "...../...../oo.../...../..... 8 6 x", "c3");
    assert.equal(r.next, "...../...../oox../...../..... 7 6 o");
    assert.deepEqual(r.branches, ["place", "push_blocked_occupied"]);
    // Here b2 -> a1 and c2 -> c1 both succeed while b3 -> a3 is blocked by a checker that is
    // itself not pushed.
    const r2 = turn(rid("blocked"), "...../.oo../oo.../...../..... 8 4 x", "c3");
    assert.equal(r2.next, "o.o../...../oox../...../..... 7 4 o");
    assert.deepEqual(r2.branches, ["place", "push", "push_blocked_occupied"]);
  });

  test("two pushes with the same target both fail (shared)", () => {
    // 4 rows on a torus: from a1, a2 and a4 both push towards a3.
    const r = turn(rid("torus", { board: "4x4" }), "..../o.../..../o... 8 6 x", "a1");
    assert.equal(r.next, "x.../o.../..../o... 7 6 o");
    assert.deepEqual(r.branches, ["place", "push_blocked_shared"]);
  });

  test("pushes on a wrapping surface: torus wrap", () => {
    const r1 = turn(rid("torus"), "..o../...../...../...../..... 8 7 x", "c2");
    assert.deepEqual(r1, {
      next: "...../..x../...../...../..o.. 7 7 o",
      result: null,
      branches: ["place", "push", "push_wrap"],
    });
    const r2 = turn(rid("torus"), "...../...../...../...../..o.. 8 7 x", "c1");
    assert.deepEqual(r2.next, "..x../...../...../..o../..... 7 7 o");
    assert.deepEqual(r2.branches, ["place", "push", "push_wrap"]);
  });

  test("klein twist mirrors the pushed checker's path", () => {
    // Straight up from b1 the neighbour is d5 and the push continues up to d4.
    const r1 = turn(rid("klein"), "...../...../...../...../...o. 8 7 x", "b1");
    assert.deepEqual(r1, {
      next: ".x.../...../...../...o./..... 7 7 o",
      result: null,
      branches: ["place", "push", "push_twist", "push_wrap"],
    });
    // Up-right from b1 reaches c5 with the direction mirrored to up-left: target b4.
    const r2 = turn(rid("klein"), "...../...../...../...../..o.. 8 7 x", "b1");
    assert.equal(r2.next, ".x.../...../...../.o.../..... 7 7 o");
    assert.ok(r2.branches.includes("push_twist"));
  });

  test("torus does not twist", () => {
    const r = turn(rid("torus"), "...../...../...../...../.o... 8 7 x", "b1");
    assert.equal(r.next, ".x.../...../...../.o.../..... 7 7 o");
    assert.ok(!r.branches.includes("push_twist"));
  });

  test("moves: the landing square pops, and the vacated square can receive a push", () => {
    const id = rid("blocked", { movement: "always", pattern: "anywhere", checkers: "c3" });
    const r = turn(id, "...../...../xo.../...../..... 2 2 x", "a3-c3");
    assert.equal(r.next, "...../...../o.x../...../..... 2 2 o");
    assert.deepEqual(r.branches, ["move_anywhere", "push"]);
  });

  test("a jump over an occupied square", () => {
    const id = rid("blocked", { movement: "always", pattern: "rook", jumps: "jump", checkers: "c3" });
    const r = turn(id, "x..../...../o..../...../..... 2 2 x", "a1-a5");
    assert.equal(r.next, "...../...../o..../...../x.... 2 2 o");
    assert.deepEqual(r.branches, ["move_jump", "move_rook"]);
    const plain = turn(id, "x..../...../o..../...../..... 2 2 x", "a1-a2");
    assert.deepEqual(plain.branches, ["move_rook", "push"]);
    assert.equal(plain.next, "...../x..../...../o..../..... 2 2 o");
  });

  test("a zero move pops again from the same square", () => {
    const id = rid("blocked", { movement: "always", zero: "zero", checkers: "c3" });
    const r = turn(id, "...../..o../..x../...../..... 2 2 x", "c3-c3");
    assert.equal(r.next, "..o../...../..x../...../..... 2 2 o");
    assert.deepEqual(r.branches, ["move_king", "move_zero", "push"]);
  });

  test("move_from_edge only under wrapping edges", () => {
    const pos = "x..../...../...../...../..... 2 3 x";
    const id = (edge) => rid(edge, { movement: "always", checkers: "c3" });
    assert.ok(turn(id("torus"), pos, "a1-b2").branches.includes("move_from_edge"));
    assert.ok(turn(id("klein"), pos, "a1-b2").branches.includes("move_from_edge"));
    assert.ok(!turn(id("blocked"), pos, "a1-b2").branches.includes("move_from_edge"));
    const inner = "...../.x.../...../...../..... 2 3 x";
    assert.ok(!turn(id("torus"), inner, "b2-c3").branches.includes("move_from_edge"));
  });
});

describe("lines and results", () => {
  const blocked = rid("blocked");
  test("each direction; mover alone wins", () => {
    const cases = [
      ["xx.../...../...../...../..... 6 8 x", "c1", "line_horizontal"],
      ["x..../x..../...../...../..... 6 8 x", "a3", "line_vertical"],
      ["x..../.x.../...../...../..... 6 8 x", "c3", "line_diagonal"],
      ["..x../.x.../...../...../..... 6 8 x", "a3", "line_antidiagonal"],
    ];
    for (const [pos, action, name] of cases) {
      const r = turn(blocked, pos, action);
      assert.equal(r.result, "x", `${pos} ${action}`);
      assert.deepEqual(r.branches, [name, "place", "push_blocked_occupied", "win_mover"]);
    }
  });

  test("a line made for the opponent by the pop", () => {
    const r = turn(blocked, "oo.../..o../...../...../..... 8 5 x", "c3");
    assert.deepEqual(r, {
      next: "ooo../...../..x../...../..... 7 5 o",
      result: "o",
      branches: ["line_horizontal", "place", "push", "win_opponent"],
    });
  });

  test("both lines: draw", () => {
    const r = turn(blocked, "oo.../..o../...../...../xxx.. 5 5 x", "c3");
    assert.equal(r.result, "draw");
    assert.deepEqual(r.branches, ["draw_lines", "line_horizontal", "place", "push"]);
    assert.equal(r.next, "ooo../...../..x../...../xxx.. 4 5 o");
  });

  test("lines wrap on torus but not on blocked", () => {
    const pos = "...xx/...../...../...../..... 6 8 x";
    const r = turn(rid("torus"), pos, "a1");
    assert.equal(r.result, "x");
    assert.deepEqual(r.branches, [
      "line_horizontal", "line_wrapped", "place", "push_blocked_occupied", "win_mover",
    ]);
    assert.equal(turn(blocked, pos, "a1").result, null);
  });

  test("klein lines follow the twist", () => {
    // From a5 down-right: the step leaves the bottom row, lands on column 5 - 1 - 1 = d in row 1
    // and continues down-left, to c2. On a torus the same start gives a5, b1, c2.
    const klein = rid("klein");
    const torus = rid("torus");
    const twisted = "...o./..o../...../...../o.... 8 5 x";
    const plain = ".o.../..o../...../...../o.... 8 5 x";
    const lineOf = (id, pos) => {
      const rs = parseRuleset(id);
      return findLines(rs, parsePosition(rs, pos).board).map((l) => [l.direction, l.wrapped]);
    };
    assert.deepEqual(lineOf(klein, twisted), [["diagonal", true]]);
    assert.deepEqual(lineOf(torus, twisted), []);
    assert.deepEqual(lineOf(torus, plain), [["diagonal", true]]);
    assert.deepEqual(lineOf(klein, plain), []);
  });

  test("ringout: fewer than 3 surviving loses; both at once draws", () => {
    const id = rid("ringout", { checkers: "c3" });
    assert.deepEqual(turn(id, "..o../...../...../...../..... 3 2 x", "c2"), {
      next: "...../..x../...../...../..... 2 2 o",
      result: "x",
      branches: ["fall_ringout", "place", "ringout_loss"],
    });
    assert.deepEqual(turn(id, ".xo../...../...../...../..... 2 2 x", "c2"), {
      next: "...../..x../...../...../..... 1 2 o",
      result: "draw",
      branches: ["fall_ringout", "place", "ringout_draw"],
    });
  });

  test("repetition of a position from the game history is a draw", () => {
    const id = rid("blocked", { movement: "always", checkers: "c3" });
    const history = [
      "x..../...../...../...../....o 2 2 x",
      "...../x..../...../...../....o 2 2 o",
      "...../x..../...../....o/..... 2 2 x",
    ];
    const pos = "x..../...../...../....o/..... 2 2 o";
    const r = turn(id, pos, "e4-e5", history);
    assert.equal(r.result, "draw");
    assert.deepEqual(r.branches, ["move_king", "repetition_draw"]);
    assert.equal(r.next, history[0]);
    assert.equal(turn(id, pos, "e4-e5", history.slice(1)).result, null);
  });

  test("stuck under continue: the mover moves again", () => {
    const pos = "o...o/...../...../...../o.... 3 0 x";
    const r = turn(rid("blocked", { checkers: "c3", movement: "nomove" }), pos, "c3");
    assert.deepEqual(r, {
      next: "o...o/...../..x../...../o.... 2 0 x",
      result: null,
      branches: ["place", "stuck_pass"],
    });
  });

  test("stuck under draw", () => {
    const pos = "o...o/...../...../...../o.... 3 0 x";
    const id = rid("blocked", { checkers: "c3", movement: "nomove", stuck: "draw" });
    assert.deepEqual(turn(id, pos, "c3"), {
      next: "o...o/...../..x../...../o.... 2 0 o",
      result: "draw",
      branches: ["place", "stuck_draw"],
    });
  });

  test("both stuck under continue: draw", () => {
    const pos = "x.o.o/...../...../...../o...x 1 0 x";
    const r = turn(rid("blocked", { checkers: "c3", movement: "nomove" }), pos, "c3");
    assert.deepEqual(r, {
      next: "x.o.o/...../..x../...../o...x 0 0 o",
      result: "draw",
      branches: ["place", "stuck_both_draw"],
    });
  });

  test("repetition after a pass is judged with the mover to move again", () => {
    const id = rid("blocked", { checkers: "c3", movement: "nomove" });
    const pos = "o...o/...../...../...../o.... 3 0 x";
    const passed = "o...o/...../..x../...../o.... 2 0 x";
    const r = turn(id, pos, "c3", [passed]);
    assert.equal(r.result, "draw");
    assert.deepEqual(r.branches, ["place", "repetition_draw", "stuck_pass"]);
    // The same board with o to move is a different position.
    assert.equal(turn(id, pos, "c3", [passed.replace(/x$/, "o")]).result, null);
  });
});

describe("game object", () => {
  test("history, undo and redo", () => {
    const id = rid("blocked", { movement: "always", checkers: "c3" });
    const g = new Game(id, "x..../...../...../...../....o 2 2 x");
    for (const a of ["a1-a2", "e5-e4", "a2-a1"]) g.play(a);
    assert.equal(g.result, null);
    g.play("e4-e5");
    assert.equal(g.result, "draw");
    assert.deepEqual(g.lastOutcome.branches, ["move_king", "repetition_draw"]);
    assert.throws(() => g.play("a1-a2"), /over/);
    g.undo();
    assert.equal(g.result, null);
    assert.equal(formatPosition(g.rs, g.position), "x..../...../...../....o/..... 2 2 o");
    g.redo();
    assert.equal(g.result, "draw");
    g.undo();
    g.undo();
    g.play("a2-b1");
    assert.ok(!g.canRedo());
  });

  test("a pasted position whose mover is stuck is resolved by the stuck rule", () => {
    const id = rid("blocked", { checkers: "c3", movement: "nomove" });
    const rs = parseRuleset(id);
    const pos = parsePosition(rs, "o...o/...../..x../...../o.... 2 0 o");
    const r = resolveStuck(rs, pos);
    assert.equal(formatPosition(rs, r.position), "o...o/...../..x../...../o.... 2 0 x");
    assert.deepEqual(r.branches, ["stuck_pass"]);
    const rd = resolveStuck(parseRuleset(rid("blocked", { checkers: "c3", movement: "nomove", stuck: "draw" })), pos);
    assert.equal(rd.result, "draw");
  });
});
