// pop.js: the rules of Pop (docs/rules.md, version pop1) for the browser, as one ES module with no
// dependencies. It is written from docs/rules.md alone, independently of the Python engine, so that
// the corpus agreement test compares two separate readings of the same text.
//
// Squares are indices r * cols + c (r = row from the top, c = column from the left).
// Players are 0 (x, moves first) and 1 (o); a board cell holds 0 (empty), 1 (x) or 2 (o).

export const PLAYERS = ["x", "o"];

const FIELD_VALUES = {
  version: ["pop1"],
  edge: ["reincarnation", "ringout", "blocked", "torus", "klein"],
  stuck: ["continue", "draw"],
  movement: ["nomove", "binempty", "always"],
  pattern: ["king", "rook", "bishop", "queen", "anywhere"],
  zero: ["zero", "nozero"],
  jumps: ["jump", "nojump"],
};

export const FIELDS = [
  "version",
  "board",
  "checkers",
  "edge",
  "stuck",
  "movement",
  "pattern",
  "zero",
  "jumps",
];

export const FIELD_CHOICES = {
  ...FIELD_VALUES,
  board: (() => {
    const out = [];
    for (let r = 3; r <= 8; r++) for (let c = 3; c <= 8; c++) out.push(`${r}x${c}`);
    return out;
  })(),
  checkers: Array.from({ length: 14 }, (_, i) => `c${i + 3}`),
};

export const DEFAULT_RULESET_ID = "pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump";
export const RESEARCH_RULESET_ID = DEFAULT_RULESET_ID;

/** Every error about bad input; the message is one line naming what was wrong and where. */
export class PopError extends Error {
  constructor(message) {
    super(message);
    this.name = "PopError";
  }
}

// The 8 directions of the pop, and the 4 directions that name a line (docs/rules.md: horizontal,
// vertical and the two diagonals; diagonal = down-right, antidiagonal = down-left).
export const DIRECTIONS = [
  [-1, -1],
  [-1, 0],
  [-1, 1],
  [0, -1],
  [0, 1],
  [1, -1],
  [1, 0],
  [1, 1],
];
export const LINE_DIRECTIONS = [
  ["horizontal", 0, 1],
  ["vertical", 1, 0],
  ["diagonal", 1, 1],
  ["antidiagonal", 1, -1],
];
const ROOK_DIRS = [
  [-1, 0],
  [1, 0],
  [0, -1],
  [0, 1],
];
const BISHOP_DIRS = [
  [-1, -1],
  [-1, 1],
  [1, -1],
  [1, 1],
];

// ---------------------------------------------------------------------------------------------
// Ruleset identifiers

function fieldError(field, value, allowed) {
  return new PopError(`ruleset field '${field}': '${value}' is not allowed (expected ${allowed})`);
}

/** Parse a ruleset identifier such as pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump. */
export function parseRuleset(id) {
  if (typeof id !== "string") throw new PopError("ruleset: expected an identifier string");
  const parts = id.trim().split("-");
  if (parts.length !== FIELDS.length) {
    throw new PopError(
      `ruleset '${id}': expected ${FIELDS.length} fields joined by '-' (${FIELDS.join("-")}), ` +
        `got ${parts.length}`,
    );
  }
  const [version, board, checkers, edge, stuck, movement, pattern, zero, jumps] = parts;
  for (const [field, value] of [
    ["version", version],
    ["edge", edge],
    ["stuck", stuck],
    ["movement", movement],
    ["pattern", pattern],
    ["zero", zero],
    ["jumps", jumps],
  ]) {
    if (!FIELD_VALUES[field].includes(value)) {
      throw fieldError(field, value, `one of ${FIELD_VALUES[field].join(", ")}`);
    }
  }
  // Digits are matched exactly (no leading zeros) so that parse and format round-trip.
  const bm = /^([1-9][0-9]*)x([1-9][0-9]*)$/.exec(board);
  if (!bm) throw fieldError("board", board, "RxC with 3 <= R, C <= 8");
  const rows = Number(bm[1]);
  const cols = Number(bm[2]);
  if (rows < 3 || rows > 8 || cols < 3 || cols > 8) {
    throw fieldError("board", board, "RxC with 3 <= R, C <= 8");
  }
  const cm = /^c([1-9][0-9]*)$/.exec(checkers);
  if (!cm || Number(cm[1]) < 3 || Number(cm[1]) > 16) {
    throw fieldError("checkers", checkers, "cN with 3 <= N <= 16");
  }
  return makeRuleset({
    version,
    rows,
    cols,
    checkers: Number(cm[1]),
    edge,
    stuck,
    movement,
    pattern,
    zero: zero === "zero",
    jump: jumps === "jump",
  });
}

function makeRuleset(f) {
  const rs = { ...f };
  rs.size = rs.rows * rs.cols;
  rs.wraps = rs.edge === "torus" || rs.edge === "klein";
  rs.id = formatRuleset(rs);
  return Object.freeze(rs);
}

/** The identifier of a ruleset object (fields in docs/rules.md order). */
export function formatRuleset(rs) {
  return [
    rs.version,
    `${rs.rows}x${rs.cols}`,
    `c${rs.checkers}`,
    rs.edge,
    rs.stuck,
    rs.movement,
    rs.pattern,
    rs.zero ? "zero" : "nozero",
    rs.jump ? "jump" : "nojump",
  ].join("-");
}

/** The nine field values of a ruleset as strings keyed by field name. */
export function rulesetFields(rs) {
  const parts = formatRuleset(rs).split("-");
  return Object.fromEntries(FIELDS.map((f, i) => [f, parts[i]]));
}

function asRuleset(rs) {
  return typeof rs === "string" ? parseRuleset(rs) : rs;
}

// ---------------------------------------------------------------------------------------------
// Edge surfaces

/**
 * One step from square (r, c) in direction (dr, dc) on the ruleset's edge surface.
 * Returns null off a non-wrapping edge, else {r, c, sq, dr, dc, wrapped, twisted} where
 * (dr, dc) is the direction after the step (Klein's twist flips the column part) and
 * wrapped / twisted say whether the step crossed a wrapping edge / Klein's top or bottom.
 */
export function step(rs, r, c, dr, dc) {
  const R = rs.rows;
  const C = rs.cols;
  let nr = r + dr;
  let nc = c + dc;
  const offRow = nr < 0 || nr >= R;
  const offCol = nc < 0 || nc >= C;
  if (!rs.wraps) {
    if (offRow || offCol) return null;
    return { r: nr, c: nc, sq: nr * C + nc, dr, dc, wrapped: false, twisted: false };
  }
  nr = ((nr % R) + R) % R;
  nc = ((nc % C) + C) % C;
  let ndc = dc;
  let twisted = false;
  if (rs.edge === "klein" && offRow) {
    nc = C - 1 - nc;
    ndc = -dc;
    twisted = true;
  }
  return { r: nr, c: nc, sq: nr * C + nc, dr, dc: ndc, wrapped: offRow || offCol, twisted };
}

// ---------------------------------------------------------------------------------------------
// Notation

/** Square index to notation: column letter then row number, a1 top-left. */
export function formatSquare(rs, sq) {
  const r = Math.floor(sq / rs.cols);
  const c = sq % rs.cols;
  return String.fromCharCode(97 + c) + String(r + 1);
}

export function parseSquare(rs, text) {
  const m = /^([a-z])([1-9])$/.exec(text);
  if (!m) throw new PopError(`square '${text}': expected a column letter and a row number`);
  const c = m[1].charCodeAt(0) - 97;
  const r = Number(m[2]) - 1;
  if (c >= rs.cols || r >= rs.rows) {
    throw new PopError(`square '${text}': off the ${rs.rows}x${rs.cols} board`);
  }
  return r * rs.cols + c;
}

/** A position: {board: number[] (0 empty, 1 x, 2 o), bins: [x, o], toMove: 0 | 1}. */
export function initialPosition(rs) {
  rs = asRuleset(rs);
  return { board: new Array(rs.size).fill(0), bins: [rs.checkers, rs.checkers], toMove: 0 };
}

export function formatPosition(rs, pos) {
  const rows = [];
  for (let r = 0; r < rs.rows; r++) {
    let row = "";
    for (let c = 0; c < rs.cols; c++) row += ".xo"[pos.board[r * rs.cols + c]];
    rows.push(row);
  }
  return `${rows.join("/")} ${pos.bins[0]} ${pos.bins[1]} ${PLAYERS[pos.toMove]}`;
}

export function parsePosition(rs, text) {
  rs = asRuleset(rs);
  if (typeof text !== "string") throw new PopError("position: expected text");
  const fields = text.trim().split(/\s+/);
  if (fields.length !== 4) {
    throw new PopError(
      `position: expected 4 fields (rows, x's bin, o's bin, player to move), got ${fields.length}`,
    );
  }
  const [boardText, xBin, oBin, mover] = fields;
  const rowTexts = boardText.split("/");
  if (rowTexts.length !== rs.rows) {
    throw new PopError(`position: expected ${rs.rows} rows separated by '/', got ${rowTexts.length}`);
  }
  const board = [];
  rowTexts.forEach((row, r) => {
    if (row.length !== rs.cols) {
      throw new PopError(
        `position: row ${r + 1} '${row}' has ${row.length} squares, expected ${rs.cols}`,
      );
    }
    for (let c = 0; c < row.length; c++) {
      const v = ".xo".indexOf(row[c]);
      if (v < 0) {
        throw new PopError(
          `position: row ${r + 1} column ${c + 1}: unknown character '${row[c]}' (expected . x o)`,
        );
      }
      board.push(v);
    }
  });
  const bins = [xBin, oBin].map((b, p) => {
    if (!/^[0-9]+$/.test(b)) {
      throw new PopError(`position: ${PLAYERS[p]}'s bin '${b}' is not a non-negative integer`);
    }
    const n = Number(b);
    if (n > rs.checkers) {
      throw new PopError(
        `position: ${PLAYERS[p]}'s bin ${n} exceeds the ${rs.checkers} checkers per player`,
      );
    }
    return n;
  });
  const toMove = PLAYERS.indexOf(mover);
  if (toMove < 0) throw new PopError(`position: player to move '${mover}' is not x or o`);
  for (let p = 0; p < 2; p++) {
    const onBoard = board.filter((v) => v === p + 1).length;
    const total = onBoard + bins[p];
    if (total > rs.checkers) {
      throw new PopError(
        `position: ${PLAYERS[p]} has ${onBoard} on the board and ${bins[p]} in the bin, ` +
          `more than the ${rs.checkers} checkers per player`,
      );
    }
    if (total < rs.checkers && rs.edge !== "ringout") {
      throw new PopError(
        `position: ${PLAYERS[p]} has ${rs.checkers - total} removed checkers, ` +
          `but only the ringout edge removes checkers (edge is ${rs.edge})`,
      );
    }
  }
  return { board, bins, toMove };
}

/** An action: {from: square | null (a placement), to: square}. */
export function formatAction(rs, action) {
  const to = formatSquare(rs, action.to);
  return action.from === null || action.from === undefined
    ? to
    : `${formatSquare(rs, action.from)}-${to}`;
}

export function parseAction(rs, text) {
  rs = asRuleset(rs);
  if (typeof text !== "string") throw new PopError("action: expected text");
  const t = text.trim();
  const m = /^([a-z][1-9])(?:-([a-z][1-9]))?$/.exec(t);
  if (!m) {
    throw new PopError(`action '${text}': expected a placement like c3 or a move like c3-d4`);
  }
  if (m[2] === undefined) return { from: null, to: parseSquare(rs, m[1]) };
  return { from: parseSquare(rs, m[1]), to: parseSquare(rs, m[2]) };
}

// ---------------------------------------------------------------------------------------------
// Legal actions

/** Whether the player to move may make a board move now (docs/rules.md, A turn, 2). */
export function movementAllowed(rs, pos) {
  if (rs.movement === "always") return true;
  if (rs.movement === "binempty") return pos.bins[pos.toMove] === 0;
  return false;
}

/** The destinations of a board move from `from` on the plain grid (movement never wraps). */
export function moveDestinations(rs, board, from) {
  const R = rs.rows;
  const C = rs.cols;
  const r0 = Math.floor(from / C);
  const c0 = from % C;
  const out = [];
  if (rs.zero) out.push(from);
  const onGrid = (r, c) => r >= 0 && r < R && c >= 0 && c < C;
  if (rs.pattern === "king") {
    for (const [dr, dc] of DIRECTIONS) {
      const r = r0 + dr;
      const c = c0 + dc;
      if (onGrid(r, c) && board[r * C + c] === 0) out.push(r * C + c);
    }
  } else if (rs.pattern === "anywhere") {
    for (let sq = 0; sq < rs.size; sq++) if (sq !== from && board[sq] === 0) out.push(sq);
  } else {
    const dirs =
      rs.pattern === "rook"
        ? ROOK_DIRS
        : rs.pattern === "bishop"
          ? BISHOP_DIRS
          : ROOK_DIRS.concat(BISHOP_DIRS);
    for (const [dr, dc] of dirs) {
      for (let k = 1; ; k++) {
        const r = r0 + k * dr;
        const c = c0 + k * dc;
        if (!onGrid(r, c)) break;
        if (board[r * C + c] !== 0) {
          if (rs.jump) continue; // a jump passes over occupied squares
          break; // a slide stops at the first occupied square
        }
        out.push(r * C + c);
      }
    }
  }
  return out.sort((a, b) => a - b);
}

/** Every legal action of the player to move: placements first, then moves, by square. */
export function legalActions(rs, pos) {
  rs = asRuleset(rs);
  const out = [];
  const me = pos.toMove + 1;
  if (pos.bins[pos.toMove] > 0) {
    for (let sq = 0; sq < rs.size; sq++) if (pos.board[sq] === 0) out.push({ from: null, to: sq });
  }
  if (movementAllowed(rs, pos)) {
    for (let sq = 0; sq < rs.size; sq++) {
      if (pos.board[sq] !== me) continue;
      for (const to of moveDestinations(rs, pos.board, sq)) out.push({ from: sq, to });
    }
  }
  return out;
}

function sameAction(a, b) {
  return (a.from ?? null) === (b.from ?? null) && a.to === b.to;
}

export function isLegal(rs, pos, action) {
  return legalActions(rs, pos).some((a) => sameAction(a, action));
}

// ---------------------------------------------------------------------------------------------
// Lines

/**
 * Every line standing on a board: {player, squares: [s0, s1, s2], direction, wrapped}.
 * A line is S, step(S, d), step(step(S, d), d') for d among the four line directions,
 * following the edge surface; a triple found from more than one start is listed once.
 */
export function findLines(rs, board) {
  const out = [];
  const seen = new Set();
  for (let sq = 0; sq < rs.size; sq++) {
    const v = board[sq];
    if (v === 0) continue;
    const r = Math.floor(sq / rs.cols);
    const c = sq % rs.cols;
    for (const [name, dr, dc] of LINE_DIRECTIONS) {
      const s1 = step(rs, r, c, dr, dc);
      if (!s1 || board[s1.sq] !== v) continue;
      const s2 = step(rs, s1.r, s1.c, s1.dr, s1.dc);
      if (!s2 || board[s2.sq] !== v) continue;
      const squares = [sq, s1.sq, s2.sq];
      const key = `${name}:${[...squares].sort((a, b) => a - b).join(",")}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ player: v - 1, squares, direction: name, wrapped: s1.wrapped || s2.wrapped });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// A turn

function samePosition(a, b) {
  if (a.toMove !== b.toMove || a.bins[0] !== b.bins[0] || a.bins[1] !== b.bins[1]) return false;
  for (let i = 0; i < a.board.length; i++) if (a.board[i] !== b.board[i]) return false;
  return true;
}

function toPosition(rs, p) {
  return typeof p === "string" ? parsePosition(rs, p) : p;
}

function slidePassedOver(rs, board, from, to) {
  const C = rs.cols;
  const dr = Math.sign(Math.floor(to / C) - Math.floor(from / C));
  const dc = Math.sign((to % C) - (from % C));
  const dist = Math.max(
    Math.abs(Math.floor(to / C) - Math.floor(from / C)),
    Math.abs((to % C) - (from % C)),
  );
  for (let k = 1; k < dist; k++) {
    if (board[from + k * (dr * C + dc)] !== 0) return true;
  }
  return false;
}

function onBorder(rs, sq) {
  const r = Math.floor(sq / rs.cols);
  const c = sq % rs.cols;
  return r === 0 || c === 0 || r === rs.rows - 1 || c === rs.cols - 1;
}

/**
 * Apply a legal action: land, pop, result (docs/rules.md, A turn and Stuck).
 * `history` lists the earlier positions of the game (texts or objects), oldest first; `pos`
 * itself also counts as having occurred. Returns {next, result, branches, pops, lines,
 * snapshot, landed} where `result` is "x", "o", "draw" or null, `next` is the position as
 * handed over, `pops` describes each looked-at push for animation, and `lines` the lines
 * standing after the pop.
 */
export function applyAction(rs, pos, action, history = []) {
  rs = asRuleset(rs);
  pos = toPosition(rs, pos);
  if (typeof action === "string") action = parseAction(rs, action);
  if (!isLegal(rs, pos, action)) {
    throw new PopError(
      `action '${formatAction(rs, action)}' is not legal in '${formatPosition(rs, pos)}'`,
    );
  }
  const mover = pos.toMove;
  const opp = 1 - mover;
  const board = pos.board.slice();
  const bins = pos.bins.slice();
  const branches = new Set();
  const from = action.from ?? null;
  const L = action.to;

  // 1-3. Place or move, then land.
  if (from === null) {
    bins[mover] -= 1;
    branches.add("place");
  } else {
    branches.add(`move_${rs.pattern}`);
    if (from === L) branches.add("move_zero");
    if (
      rs.jump &&
      from !== L &&
      ["rook", "bishop", "queen"].includes(rs.pattern) &&
      slidePassedOver(rs, pos.board, from, L)
    ) {
      branches.add("move_jump");
    }
    if (rs.wraps && onBorder(rs, from)) branches.add("move_from_edge");
    board[from] = 0;
  }
  board[L] = mover + 1;
  const snapshot = board.slice();

  // 4. Pop: every push is decided on the snapshot, then all are applied together.
  const Lr = Math.floor(L / rs.cols);
  const Lc = L % rs.cols;
  const candidates = [];
  for (const [dr, dc] of DIRECTIONS) {
    const n = step(rs, Lr, Lc, dr, dc);
    if (!n || snapshot[n.sq] === 0) continue;
    candidates.push({ dir: [dr, dc], n });
  }
  const fromCount = new Map();
  for (const cand of candidates) fromCount.set(cand.n.sq, (fromCount.get(cand.n.sq) || 0) + 1);
  const pops = [];
  const targetCount = new Map();
  for (const cand of candidates) {
    const N = cand.n.sq;
    const owner = snapshot[N] - 1;
    const pop = { from: N, to: null, player: owner, dir: cand.dir, kind: null };
    if (fromCount.get(N) > 1) {
      // The same square reached from two directions is not pushed (docs/rules.md, Pop).
      pop.kind = "ambiguous";
    } else {
      const t = step(rs, cand.n.r, cand.n.c, cand.n.dr, cand.n.dc);
      if (!t) {
        pop.kind = rs.edge === "blocked" ? "blocked" : "fall";
      } else {
        pop.to = t.sq;
        pop.wrapped = cand.n.wrapped || t.wrapped;
        pop.twisted = cand.n.twisted || t.twisted;
        targetCount.set(t.sq, (targetCount.get(t.sq) || 0) + 1);
      }
    }
    pops.push(pop);
  }
  for (const pop of pops) {
    if (pop.kind !== null) continue;
    if (snapshot[pop.to] !== 0) pop.kind = "occupied";
    else if (targetCount.get(pop.to) > 1) pop.kind = "shared";
    else pop.kind = "push";
  }
  for (const pop of pops) {
    if (pop.kind === "push") {
      board[pop.from] = 0;
      branches.add("push");
      if (pop.wrapped) branches.add("push_wrap");
      if (pop.twisted) branches.add("push_twist");
    } else if (pop.kind === "fall") {
      board[pop.from] = 0;
      if (rs.edge === "reincarnation") bins[pop.player] += 1;
      branches.add(`fall_${rs.edge}`);
    } else if (pop.kind === "blocked") {
      branches.add("fall_blocked");
    } else if (pop.kind === "occupied") {
      branches.add("push_blocked_occupied");
    } else if (pop.kind === "shared") {
      branches.add("push_blocked_shared");
    }
  }
  // Targets were empty in the snapshot and every source was occupied, so the order of these
  // writes after the removals above cannot matter.
  for (const pop of pops) if (pop.kind === "push") board[pop.to] = pop.player + 1;

  const done = (result, toMove) => ({
    next: { board, bins, toMove },
    result,
    branches: [...branches].sort(),
    pops,
    lines,
    snapshot,
    landed: L,
    from,
  });

  // 5.1 Lines.
  const lines = findLines(rs, board);
  for (const line of lines) {
    branches.add(`line_${line.direction}`);
    if (line.wrapped) branches.add("line_wrapped");
  }
  const hasLine = [0, 1].map((p) => lines.some((l) => l.player === p));
  if (hasLine[mover] && hasLine[opp]) {
    branches.add("draw_lines");
    return done("draw", opp);
  }
  if (hasLine[mover]) {
    branches.add("win_mover");
    return done(PLAYERS[mover], opp);
  }
  if (hasLine[opp]) {
    branches.add("win_opponent");
    return done(PLAYERS[opp], opp);
  }

  // 5.2 Ringout: fewer than 3 surviving checkers (board + bin) loses.
  if (rs.edge === "ringout") {
    const low = [0, 1].map((p) => board.filter((v) => v === p + 1).length + bins[p] < 3);
    if (low[0] && low[1]) {
      branches.add("ringout_draw");
      return done("draw", opp);
    }
    if (low[0] || low[1]) {
      branches.add("ringout_loss");
      return done(low[0] ? "o" : "x", opp);
    }
  }

  // Stuck: the turn is handed to the opponent, or back to the mover after a pass.
  let handed = { board, bins, toMove: opp };
  if (legalActions(rs, handed).length === 0) {
    if (rs.stuck === "draw") {
      branches.add("stuck_draw");
      return done("draw", opp);
    }
    const again = { board, bins, toMove: mover };
    if (legalActions(rs, again).length === 0) {
      branches.add("stuck_both_draw");
      return done("draw", opp);
    }
    branches.add("stuck_pass");
    handed = again;
  }

  // 5.3 Repetition, judged on the position as handed over.
  const earlier = history.map((h) => toPosition(rs, h)).concat([pos]);
  if (earlier.some((h) => samePosition(h, handed))) {
    branches.add("repetition_draw");
    // Game over: written with the opponent to move, like every game-ending action.
    return done("draw", opp);
  }
  return done(null, handed.toMove);
}

/**
 * A position in which the player to move has no legal action can only be handed in from
 * outside a game (a pasted or typed position). Resolve it as the Stuck rule would:
 * {position, result, branches}.
 */
export function resolveStuck(rs, pos) {
  rs = asRuleset(rs);
  if (legalActions(rs, pos).length > 0) return { position: pos, result: null, branches: [] };
  if (rs.stuck === "draw") return { position: pos, result: "draw", branches: ["stuck_draw"] };
  const other = { board: pos.board, bins: pos.bins, toMove: 1 - pos.toMove };
  if (legalActions(rs, other).length === 0) {
    return { position: pos, result: "draw", branches: ["stuck_both_draw"] };
  }
  return { position: other, result: null, branches: ["stuck_pass"] };
}

// ---------------------------------------------------------------------------------------------
// A game with history, undo and redo

export class Game {
  constructor(rs, start = null) {
    this.rs = asRuleset(rs);
    const pos = start === null ? initialPosition(this.rs) : toPosition(this.rs, start);
    const resolved = resolveStuck(this.rs, pos);
    this.start = resolved.position;
    this.startResult = resolved.result;
    this.startBranches = resolved.branches;
    // Each entry: {action, outcome} where outcome is applyAction's return value.
    this.plies = [];
    this.undone = [];
  }

  get position() {
    return this.plies.length ? this.plies[this.plies.length - 1].outcome.next : this.start;
  }

  get result() {
    return this.plies.length ? this.plies[this.plies.length - 1].outcome.result : this.startResult;
  }

  get lastOutcome() {
    return this.plies.length ? this.plies[this.plies.length - 1].outcome : null;
  }

  /** The positions the game has passed through before the current one, oldest first. */
  history() {
    const out = [this.start];
    for (let i = 0; i < this.plies.length - 1; i++) out.push(this.plies[i].outcome.next);
    return this.plies.length ? out : [];
  }

  legalActions() {
    return this.result === null ? legalActions(this.rs, this.position) : [];
  }

  play(action) {
    if (this.result !== null) throw new PopError("the game is over");
    if (typeof action === "string") action = parseAction(this.rs, action);
    const outcome = applyAction(this.rs, this.position, action, this.history());
    this.plies.push({ action, outcome });
    this.undone = [];
    return outcome;
  }

  canUndo() {
    return this.plies.length > 0;
  }

  canRedo() {
    return this.undone.length > 0;
  }

  undo() {
    if (!this.plies.length) return null;
    const ply = this.plies.pop();
    this.undone.push(ply);
    return ply;
  }

  redo() {
    if (!this.undone.length) return null;
    const ply = this.undone.pop();
    this.plies.push(ply);
    return ply;
  }
}
