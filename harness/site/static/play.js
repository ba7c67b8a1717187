// The Play page: every rule comes from pop.js; this module only draws, listens and animates.
import * as P from "./pop.js";
import * as S from "./solved.js";

const $ = (id) => document.getElementById(id);
const FIELD_LABELS = {
  version: "Version",
  rows: "Rows",
  cols: "Columns",
  checkers: "Checkers each",
  edge: "Edge",
  stuck: "Stuck",
  movement: "Movement",
  pattern: "Pattern",
  zero: "Zero move",
  jumps: "Jumps",
};
const EDGE_NOTES = {
  reincarnation: "Edge: reincarnation. A checker pushed off the board returns to its owner's bin.",
  ringout: "Edge: ringout. A checker pushed off the board leaves the game; below 3 left loses.",
  blocked: "Edge: blocked. A checker at the edge cannot be pushed off; it stays.",
  torus: "Edge: torus. Pushes and lines wrap left/right and top/bottom. Moves never wrap.",
  klein:
    "Edge: klein. Left/right wrap plainly; across top/bottom the column is mirrored. " +
    "Moves never wrap.",
};
const ANIMATION_MS = 320;
const COMPUTER_DELAY_MS = 380;

const state = {
  rs: null,
  game: null,
  selected: null, // a square whose checker is picked up to move (click-click or keyboard)
  focus: 0, // the square that holds the board's roving tab stop
  opponent: "human",
  computerTimer: null,
  animation: null, // {animations, finish} while a pop is being drawn
  drag: null,
  suppressClick: false,
  solvedIndex: {}, // ruleset id -> {value, plies, meta}: the tables shipped with the site
  tables: new Map(), // ruleset id -> Promise of a parsed table
  table: null, // the current ruleset's table once loaded, else null
};

// ---------------------------------------------------------------------------------------------
// Start-up

function init() {
  try {
    state.solvedIndex = JSON.parse($("solved-index").textContent);
  } catch {
    state.solvedIndex = {};
  }
  buildFieldSelects();
  $("ruleset-form").addEventListener("submit", (e) => {
    e.preventDefault();
    applyRulesetText($("ruleset-id").value);
  });
  $("research").addEventListener("click", () => applyRulesetText(P.RESEARCH_RULESET_ID));
  $("opponent").addEventListener("change", (e) => {
    state.opponent = e.target.value;
    scheduleComputer();
  });
  $("show-values").addEventListener("change", renderValues);
  $("values-list").addEventListener("click", onValuesClick);
  $("undo").addEventListener("click", undo);
  $("redo").addEventListener("click", redo);
  $("new-game").addEventListener("click", newGame);
  $("banner-new").addEventListener("click", newGame);
  $("banner-close").addEventListener("click", () => $("banner").classList.add("dismissed"));
  $("position-form").addEventListener("submit", (e) => {
    e.preventDefault();
    loadPositionText($("position-text").value);
  });
  $("position-copy").addEventListener("click", copyPosition);
  const board = $("board");
  board.addEventListener("click", onBoardClick);
  board.addEventListener("keydown", onBoardKey);
  document.addEventListener("pointerdown", onPointerDown);
  document.addEventListener("keydown", onGlobalKey);
  document.addEventListener("paste", onPaste);
  window.addEventListener("hashchange", loadFromHash);
  window.addEventListener("resize", () => sizeBoard());
  loadFromHash();
}

function loadFromHash() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  const id = params.get("ruleset") || $("play").dataset.defaultRuleset || P.DEFAULT_RULESET_ID;
  let rs;
  try {
    rs = P.parseRuleset(id);
  } catch (e) {
    showRulesetError(e.message, id);
    rs = P.parseRuleset(P.DEFAULT_RULESET_ID);
  }
  let start = null;
  const position = params.get("position");
  if (position) {
    try {
      start = P.parsePosition(rs, position);
    } catch (e) {
      showError(e.message);
    }
  }
  startGame(rs, start, { keepError: true });
}

function startGame(rs, start = null, { keepError = false } = {}) {
  finishAnimation();
  cancelComputer();
  if (!keepError) {
    clearError();
    clearRulesetError();
  }
  const rebuild = !state.rs || state.rs.rows !== rs.rows || state.rs.cols !== rs.cols;
  state.rs = rs;
  state.game = new P.Game(rs, start);
  state.selected = null;
  if (rebuild) buildBoard();
  syncFieldSelects();
  $("ruleset-id").value = rs.id;
  render();
  describeTurn(null);
  prepareTable(rs);
  scheduleComputer();
}

function applyRulesetText(text) {
  let rs;
  try {
    rs = P.parseRuleset(text.trim());
  } catch (e) {
    showRulesetError(e.message, text);
    return;
  }
  clearRulesetError();
  setHashRuleset(rs.id);
  startGame(rs);
}

// A ruleset that cannot be read is said beside the field that holds it, not far below.
function showRulesetError(message, text) {
  const input = $("ruleset-id");
  input.value = text;
  input.setAttribute("aria-invalid", "true");
  const el = $("ruleset-error");
  el.textContent = message;
  el.hidden = false;
  el.scrollIntoView({ block: "nearest" });
}

function clearRulesetError() {
  $("ruleset-id").removeAttribute("aria-invalid");
  const el = $("ruleset-error");
  el.textContent = "";
  el.hidden = true;
}

function setHashRuleset(id) {
  // The address names the ruleset so a game can be shared; replaceState avoids a hashchange.
  history.replaceState(null, "", `#ruleset=${encodeURIComponent(id)}`);
}

function newGame() {
  startGame(state.rs);
}

// ---------------------------------------------------------------------------------------------
// Ruleset fields

function buildFieldSelects() {
  const box = $("fields");
  const choices = {
    version: P.FIELD_CHOICES.version,
    rows: ["3", "4", "5", "6", "7", "8"],
    cols: ["3", "4", "5", "6", "7", "8"],
    checkers: P.FIELD_CHOICES.checkers,
    edge: P.FIELD_CHOICES.edge,
    stuck: P.FIELD_CHOICES.stuck,
    movement: P.FIELD_CHOICES.movement,
    pattern: P.FIELD_CHOICES.pattern,
    zero: P.FIELD_CHOICES.zero,
    jumps: P.FIELD_CHOICES.jumps,
  };
  for (const [name, values] of Object.entries(choices)) {
    const label = document.createElement("label");
    label.className = "field";
    const span = document.createElement("span");
    span.textContent = FIELD_LABELS[name];
    const select = document.createElement("select");
    select.id = `field-${name}`;
    select.dataset.field = name;
    for (const v of values) select.add(new Option(v, v));
    select.addEventListener("change", onFieldChange);
    label.append(span, select);
    box.append(label);
  }
}

function fieldValues(rs) {
  const f = P.rulesetFields(rs);
  return { ...f, rows: String(rs.rows), cols: String(rs.cols) };
}

function syncFieldSelects() {
  const values = fieldValues(state.rs);
  for (const select of document.querySelectorAll("#fields select")) {
    select.value = values[select.dataset.field];
  }
}

function onFieldChange() {
  const v = {};
  for (const select of document.querySelectorAll("#fields select")) {
    v[select.dataset.field] = select.value;
  }
  const id = [
    v.version,
    `${v.rows}x${v.cols}`,
    v.checkers,
    v.edge,
    v.stuck,
    v.movement,
    v.pattern,
    v.zero,
    v.jumps,
  ].join("-");
  applyRulesetText(id);
}

// ---------------------------------------------------------------------------------------------
// Board

function buildBoard() {
  const { rows, cols } = state.rs;
  const board = $("board");
  board.replaceChildren();
  board.style.setProperty("--rows", rows);
  board.style.setProperty("--cols", cols);
  document.documentElement.style.setProperty("--board-cols", cols);
  for (let r = 0; r < rows; r++) {
    const row = document.createElement("div");
    row.className = "board-row";
    row.setAttribute("role", "row");
    for (let c = 0; c < cols; c++) {
      const sq = r * cols + c;
      const cell = document.createElement("div");
      cell.className = "sq";
      cell.setAttribute("role", "gridcell");
      cell.dataset.square = P.formatSquare(state.rs, sq);
      cell.dataset.index = String(sq);
      cell.tabIndex = -1;
      row.append(cell);
    }
    board.append(row);
  }
  const colLabels = $("col-labels");
  colLabels.replaceChildren();
  for (let c = 0; c < cols; c++) {
    const s = document.createElement("span");
    s.textContent = String.fromCharCode(97 + c);
    colLabels.append(s);
  }
  const rowLabels = $("row-labels");
  rowLabels.replaceChildren();
  for (let r = 0; r < rows; r++) {
    const s = document.createElement("span");
    s.textContent = String(r + 1);
    rowLabels.append(s);
  }
  state.focus = 0;
  sizeBoard();
}

function sizeBoard() {
  if (!state.rs) return;
  // Cells shrink on narrow screens so the whole board always fits without scrolling sideways.
  const avail = Math.min(document.documentElement.clientWidth - 72, 560);
  const cell = Math.max(34, Math.min(72, Math.floor(avail / state.rs.cols)));
  document.documentElement.style.setProperty("--cell", `${cell}px`);
}

function cells() {
  return $("board").querySelectorAll(".sq");
}

function cellAt(sq) {
  return $("board").querySelector(`.sq[data-index="${sq}"]`);
}

function checkerElement(player) {
  const el = document.createElement("span");
  el.className = `checker ${P.PLAYERS[player]}`;
  el.setAttribute("aria-hidden", "true");
  return el;
}

function humanToMove() {
  const g = state.game;
  if (g.result !== null) return false;
  const mover = P.PLAYERS[g.position.toMove];
  if (state.opponent === "human") return true;
  // "random-o" / "perfect-o": the computer plays o, the person x (and the other way round).
  return mover !== state.opponent.slice(-1);
}

function legalNow() {
  return humanToMove() ? state.game.legalActions() : [];
}

function destinationsOf(from) {
  return legalNow()
    .filter((a) => a.from === from)
    .map((a) => a.to);
}

function canPlaceAt(sq) {
  return legalNow().some((a) => a.from === null && a.to === sq);
}

/** Draw a board array (the position, or a mid-animation snapshot) and the markers. */
function drawBoard(
  boardArray,
  { lines = [], dests = [], landed = null, from = null, pushed = [] } = {},
) {
  const inLine = new Set(lines.flatMap((l) => l.squares));
  const pushedSet = new Set(pushed);
  const destSet = new Set(dests);
  for (const cell of cells()) {
    const sq = Number(cell.dataset.index);
    const v = boardArray[sq];
    // Keep a checker element that is already right: replacing the element under the pointer
    // between pointerdown and pointerup would make the browser drop the click.
    for (const el of cell.querySelectorAll(".checker.arriving")) el.remove();
    const existing = cell.querySelector(".checker");
    if (existing && (!v || !existing.classList.contains(P.PLAYERS[v - 1]))) existing.remove();
    if (v && !(existing && existing.isConnected)) cell.append(checkerElement(v - 1));
    cell.querySelector(".checker")?.classList.remove("lifted");
    cell.classList.toggle("in-line", inLine.has(sq));
    cell.classList.toggle("dest", destSet.has(sq));
    cell.classList.toggle("selected", state.selected === sq);
    cell.classList.toggle("landed", landed === sq);
    cell.classList.toggle("vacated", from !== null && from === sq && landed !== sq);
    cell.classList.toggle("pushed", pushedSet.has(sq) && !!v);
    cell.tabIndex = sq === state.focus ? 0 : -1;
    const who = v ? `${P.PLAYERS[v - 1]} checker` : "empty";
    const extra = destSet.has(sq)
      ? ", legal destination"
      : inLine.has(sq)
        ? ", in a line"
        : pushedSet.has(sq) && v
          ? ", just pushed"
          : "";
    cell.setAttribute("aria-label", `${cell.dataset.square}, ${who}${extra}`);
  }
}

function render() {
  const g = state.game;
  const rs = state.rs;
  const pos = g.position;
  const board = $("board");
  board.dataset.ruleset = rs.id;
  board.dataset.edge = rs.edge;
  board.dataset.position = P.formatPosition(rs, pos);
  const last = g.lastOutcome;
  drawBoard(pos.board, {
    lines: last ? last.lines : [],
    dests: state.selected !== null ? destinationsOf(state.selected) : [],
    landed: last ? last.landed : null,
    from: last ? last.from : null,
    // After the pop, the checkers it pushed stay marked until the next turn.
    pushed: last && last.pops ? last.pops.filter((p) => p.kind === "push").map((p) => p.to) : [],
  });
  renderBins();
  renderStatus();
  $("edge-note").textContent = EDGE_NOTES[rs.edge];
  $("undo").disabled = !g.canUndo();
  $("redo").disabled = !g.canRedo();
  const text = $("position-text");
  if (document.activeElement !== text) text.value = board.dataset.position;
  renderValues();
}

function renderBins() {
  const rs = state.rs;
  const pos = state.game.position;
  for (const p of [0, 1]) {
    const name = P.PLAYERS[p];
    const bin = $(`bin-${name}`);
    bin.replaceChildren();
    const onBoard = pos.board.filter((v) => v === p + 1).length;
    const removed = rs.checkers - onBoard - pos.bins[p];
    const toMove = state.game.result === null && pos.toMove === p;
    bin.classList.toggle("to-move", toMove);
    const label = document.createElement("span");
    label.className = "bin-label";
    label.textContent = `${name}`;
    const stack = document.createElement("span");
    stack.className = "bin-stack";
    for (let i = 0; i < pos.bins[p]; i++) {
      const c = checkerElement(p);
      // Only the top checker of the mover's bin can be picked up, and only by a human.
      if (i === pos.bins[p] - 1 && toMove && humanToMove()) {
        c.classList.add("grab");
        c.dataset.binChecker = name;
        c.title = "Drag onto an empty square to place";
      }
      stack.append(c);
    }
    const count = document.createElement("span");
    count.className = "bin-count";
    count.textContent =
      `${pos.bins[p]} in bin` + (rs.edge === "ringout" ? ` · ${removed} out of the game` : "");
    bin.append(label, stack, count);
    bin.setAttribute(
      "aria-label",
      `${name}'s bin: ${pos.bins[p]} checkers` + (rs.edge === "ringout" ? `, ${removed} out` : ""),
    );
  }
}

function resultText(outcome, branches, result) {
  const has = (b) => branches.includes(b);
  const winner = result;
  const loser = winner === "x" ? "o" : "x";
  if (has("draw_lines")) return ["Draw", "Both players have three in a line."];
  if (has("win_mover") || has("win_opponent")) {
    return [`${winner} wins`, `Three ${winner} checkers in a line.`];
  }
  if (has("ringout_draw")) return ["Draw", "Both players dropped below three checkers at once."];
  if (has("ringout_loss")) {
    return [`${winner} wins`, `${loser} has fewer than three checkers left.`];
  }
  if (has("repetition_draw")) return ["Draw", "The same position came back (repetition)."];
  if (has("stuck_both_draw")) return ["Draw", "Neither player has a legal action."];
  if (has("stuck_draw")) {
    const stuck = P.PLAYERS[outcome ? outcome.next.toMove : state.game.position.toMove];
    return ["Draw", `${stuck} has no legal action.`];
  }
  return [result === "draw" ? "Draw" : `${result} wins`, ""];
}

function renderStatus() {
  const g = state.game;
  const status = $("status");
  const banner = $("banner");
  const result = g.result;
  status.dataset.status = result ?? "";
  if (result === null) {
    const pos = g.position;
    const mover = P.PLAYERS[pos.toMove];
    const canMove = P.movementAllowed(state.rs, pos);
    const canPlace = pos.bins[pos.toMove] > 0;
    const how = canPlace && canMove ? "place or move" : canPlace ? "place" : "move";
    const kind = state.opponent.startsWith("perfect") ? "perfect player" : "random mover";
    const who = humanToMove() ? "" : ` (${kind} thinking…)`;
    status.textContent = `${mover} to ${how}${who}`;
    status.className = `status turn-${mover}`;
    banner.hidden = true;
    return;
  }
  const last = g.lastOutcome;
  const branches = last ? last.branches : g.startBranches;
  const [title, detail] = resultText(last, branches, result);
  status.textContent = `${title}. ${detail}`.trim();
  status.className = `status result-${result}`;
  $("banner-title").textContent = title;
  $("banner-detail").textContent = detail;
  if (banner.hidden || banner.dataset.result !== result) banner.classList.remove("dismissed");
  banner.dataset.result = result;
  banner.hidden = false;
}

const BRANCH_WORDS = {
  place: "A checker was placed from the bin.",
  move_zero: "Zero move: the checker stayed and popped again.",
  move_jump: "The move jumped over occupied squares.",
  move_from_edge: "The move started on the border (moves never wrap).",
  push: "Neighbours were pushed one square away.",
  push_wrap: "A push went across a wrapping edge.",
  push_twist: "A push crossed the Klein twist (column mirrored).",
  fall_reincarnation: "A checker fell off and went back to its owner's bin.",
  fall_ringout: "A checker fell off and left the game.",
  fall_blocked: "A checker at the edge could not fall and stayed.",
  push_blocked_occupied: "A push failed: the square behind was occupied.",
  push_blocked_shared: "Pushes failed: two checkers aimed at the same square.",
  line_wrapped: "A line runs across a wrapping edge.",
  stuck_pass: "The opponent had no legal action and passed.",
};

function describeTurn(outcome) {
  const list = $("events");
  list.replaceChildren();
  const add = (text, name) => {
    const li = document.createElement("li");
    li.textContent = text;
    if (name) li.dataset.branch = name;
    list.append(li);
  };
  if (!outcome) {
    if (state.game.startBranches.includes("stuck_pass")) {
      add("The player to move had no legal action and passed.", "stuck_pass");
    } else {
      add("Nothing played yet.");
    }
    return;
  }
  const rs = state.rs;
  const ply = state.game.plies[state.game.plies.length - 1];
  const plies = state.game.plies;
  const before = plies.length > 1 ? plies[plies.length - 2].outcome.next : state.game.start;
  add(`${P.PLAYERS[before.toMove]} played ${P.formatAction(rs, ply.action)}.`);
  // In the order things happen in a turn: the action, the pop, then the lines.
  const rank = (b) =>
    b.startsWith("move_") || b === "place" ? 0 : b.startsWith("line_") ? 2 : 1;
  const ordered = [...outcome.branches].sort((a, b) => rank(a) - rank(b));
  for (const b of ordered) {
    if (b.startsWith("move_") && !(b in BRANCH_WORDS)) add(`A ${b.slice(5)} move.`, b);
    else if (b.startsWith("line_") && b !== "line_wrapped") add(`A ${b.slice(5)} line stands.`, b);
    else if (BRANCH_WORDS[b]) add(BRANCH_WORDS[b], b);
  }
}

// ---------------------------------------------------------------------------------------------
// Playing

function play(action) {
  finishAnimation();
  clearError();
  let outcome;
  try {
    outcome = state.game.play(action);
  } catch (e) {
    showError(e.message);
    return;
  }
  state.selected = null;
  state.focus = action.to;
  render();
  describeTurn(outcome);
  animate(outcome);
  scheduleComputer();
}

function undo() {
  finishAnimation();
  cancelComputer();
  // Against the random mover, go back to the last position where the human was to move.
  state.game.undo();
  while (state.opponent !== "human" && state.game.canUndo() && !humanToMove()) {
    state.game.undo();
  }
  state.selected = null;
  render();
  describeTurn(state.game.lastOutcome);
  scheduleComputer();
}

function redo() {
  finishAnimation();
  cancelComputer();
  state.game.redo();
  while (state.opponent !== "human" && state.game.canRedo() && !humanToMove()) {
    state.game.redo();
  }
  state.selected = null;
  render();
  describeTurn(state.game.lastOutcome);
  scheduleComputer();
}

function cancelComputer() {
  if (state.computerTimer !== null) clearTimeout(state.computerTimer);
  state.computerTimer = null;
}

function scheduleComputer() {
  cancelComputer();
  const g = state.game;
  // Only the status and bins are redrawn here: a full render would cut a running animation.
  renderStatus();
  renderBins();
  if (state.opponent === "human" || g.result !== null || humanToMove()) return;
  if (state.opponent.startsWith("perfect") && !state.table) return; // waits for the table
  state.computerTimer = setTimeout(() => {
    state.computerTimer = null;
    const actions = state.game.legalActions();
    if (!actions.length || humanToMove()) return;
    play(computerAction(actions));
  }, COMPUTER_DELAY_MS + (animationsOn() ? ANIMATION_MS : 0));
}

function computerAction(actions) {
  if (state.opponent.startsWith("perfect") && state.table) {
    const best = S.bestAction(state.table, state.game.position);
    if (best) return best.action;
    // Only a position set up by hand can be missing from the table (it holds every position
    // reachable from the start); the note under the opponent says so.
  }
  return actions[Math.floor(Math.random() * actions.length)];
}

// ---------------------------------------------------------------------------------------------
// Solved rulesets: perfect play and the value of every legal action

function solvedRulesetLinks() {
  return Object.keys(state.solvedIndex)
    .map((id) => `<a href="#ruleset=${encodeURIComponent(id)}">${id}</a>`)
    .join(", ");
}

function prepareTable(rs) {
  const entry = state.solvedIndex[rs.id];
  state.table = null;
  $("values").dataset.ready = "false"; // set again once this ruleset's table is in
  const note = $("solved-note");
  for (const option of $("opponent").querySelectorAll("option[data-needs-table]")) {
    option.disabled = !entry;
  }
  if (!entry) {
    if (state.opponent.startsWith("perfect")) {
      state.opponent = "human";
      $("opponent").value = "human";
    }
    note.innerHTML =
      "Perfect play and action values need a ruleset the solver has solved completely: " +
      (solvedRulesetLinks() || "none ships with this site") +
      ".";
    renderValues();
    return;
  }
  const value =
    entry.value === "draw" ? "a draw" : `won by ${entry.value} in ${entry.plies} plies`;
  note.textContent = `Solved completely: ${entry.positions} positions; the start is ${value}.`;
  if (!state.tables.has(rs.id)) state.tables.set(rs.id, S.loadTable(entry.meta));
  state.tables.get(rs.id).then(
    (table) => {
      if (state.rs.id !== rs.id) return; // the ruleset changed while the table was loading
      state.table = table;
      $("values").dataset.ready = "true";
      renderValues();
      scheduleComputer();
    },
    (e) => {
      state.tables.delete(rs.id);
      showError(`Could not load the solver's table for ${rs.id}: ${e.message}`);
    },
  );
}

function describeValue(v) {
  if (v.winner === "draw") return "draw";
  return `${v.winner} wins in ${v.plies}`;
}

function renderValues() {
  const box = $("values");
  const on = $("show-values").checked;
  box.hidden = !on;
  if (!on) return;
  const here = $("values-here");
  const list = $("values-list");
  list.replaceChildren();
  delete here.dataset.winner;
  delete here.dataset.plies;
  if (!state.solvedIndex[state.rs.id]) {
    here.textContent = "No solver table for this ruleset.";
    return;
  }
  if (!state.table) {
    here.textContent = "Loading the solver's table…";
    return;
  }
  const g = state.game;
  if (g.result !== null) {
    here.textContent = "The game is over.";
    return;
  }
  const pos = g.position;
  const v = S.valueOf(state.table, pos);
  const rated = v ? S.ratedActions(state.table, pos) : null;
  if (!v || !rated) {
    here.textContent =
      "This position cannot be reached from the start, so the table has no value for it.";
    return;
  }
  here.dataset.winner = v.winner;
  here.dataset.plies = v.plies ?? "";
  here.textContent =
    v.winner === "draw"
      ? "This position is a draw with best play."
      : `${v.winner} wins in ${v.plies} plies with best play.`;
  const mover = P.PLAYERS[pos.toMove];
  // Best first, like an endgame-table explorer; ties keep the legal-action order.
  const order = rated
    .map((r, i) => ({ r, i, s: S.score(r, mover) }))
    .sort((a, b) => b.s[0] - a.s[0] || b.s[1] - a.s[1] || a.i - b.i);
  for (const { r } of order) {
    const li = document.createElement("li");
    li.dataset.action = r.text;
    li.dataset.winner = r.winner;
    li.dataset.plies = r.plies ?? "";
    li.className = r.winner === "draw" ? "v-draw" : r.winner === mover ? "v-win" : "v-loss";
    const button = document.createElement("button");
    button.type = "button";
    button.className = "value-action";
    button.textContent = r.text;
    button.disabled = !humanToMove();
    button.title = `Play ${r.text}`;
    const span = document.createElement("span");
    span.className = "value-outcome";
    span.textContent = describeValue(r);
    li.append(button, span);
    list.append(li);
  }
}

function onValuesClick(e) {
  const li = e.target.closest("li[data-action]");
  if (!li || !e.target.closest("button") || !humanToMove()) return;
  play(P.parseAction(state.rs, li.dataset.action));
}

function loadPositionText(text) {
  try {
    const pos = P.parsePosition(state.rs, text);
    startGame(state.rs, pos);
  } catch (e) {
    showError(e.message);
  }
}

async function copyPosition() {
  const text = $("board").dataset.position;
  try {
    await navigator.clipboard.writeText(text);
    flash($("position-copy"), "Copied");
  } catch {
    // Clipboard access needs a secure context; selecting the text lets people copy by hand.
    const area = $("position-text");
    area.value = text;
    area.focus();
    area.select();
    flash($("position-copy"), "Selected: press Ctrl+C");
  }
}

function flash(button, text) {
  const old = button.dataset.label || button.textContent;
  button.dataset.label = old;
  button.textContent = text;
  setTimeout(() => {
    button.textContent = old;
  }, 1200);
}

function showError(message) {
  const el = $("error");
  el.textContent = message;
  el.hidden = false;
}

function clearError() {
  const el = $("error");
  el.textContent = "";
  el.hidden = true;
}

// ---------------------------------------------------------------------------------------------
// Clicks and keys

function activateSquare(sq) {
  if (!humanToMove()) return;
  if (state.selected !== null) {
    const from = state.selected;
    if (destinationsOf(from).includes(sq)) {
      play({ from, to: sq });
      return;
    }
    state.selected = null;
    if (sq === from) {
      render();
      return;
    }
  }
  const pos = state.game.position;
  if (pos.board[sq] === pos.toMove + 1 && destinationsOf(sq).length) {
    state.selected = sq;
    state.focus = sq;
    render();
    return;
  }
  if (canPlaceAt(sq)) {
    play({ from: null, to: sq });
    return;
  }
  render();
}

function onBoardClick(e) {
  if (state.suppressClick) {
    state.suppressClick = false;
    return;
  }
  const cell = e.target.closest(".sq");
  if (!cell) return;
  finishAnimation();
  state.focus = Number(cell.dataset.index);
  activateSquare(Number(cell.dataset.index));
}

function onBoardKey(e) {
  const cell = e.target.closest(".sq");
  if (!cell) return;
  const { rows, cols } = state.rs;
  let sq = Number(cell.dataset.index);
  const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
  if (e.key in moves) {
    const [dr, dc] = moves[e.key];
    const r = Math.min(rows - 1, Math.max(0, Math.floor(sq / cols) + dr));
    const c = Math.min(cols - 1, Math.max(0, (sq % cols) + dc));
    sq = r * cols + c;
    state.focus = sq;
    for (const el of cells()) el.tabIndex = Number(el.dataset.index) === sq ? 0 : -1;
    cellAt(sq).focus();
    e.preventDefault();
  } else if (e.key === "Enter" || e.key === " ") {
    finishAnimation();
    state.focus = sq;
    activateSquare(sq);
    cellAt(state.focus)?.focus();
    e.preventDefault();
  } else if (e.key === "Escape" && state.selected !== null) {
    state.selected = null;
    render();
    cellAt(sq).focus();
  }
}

function onPaste(e) {
  // Pasting anywhere but in a text field loads the pasted position (Ctrl+V on the board).
  const tag = (e.target.tagName || "").toLowerCase();
  if (["input", "textarea"].includes(tag)) return;
  const text = e.clipboardData?.getData("text/plain");
  if (!text) return;
  e.preventDefault();
  $("position-text").value = text.trim();
  loadPositionText(text);
}

function onGlobalKey(e) {
  const tag = (e.target.tagName || "").toLowerCase();
  if (["input", "textarea", "select"].includes(tag)) return;
  const ctrl = e.ctrlKey || e.metaKey;
  const key = e.key.toLowerCase();
  if ((ctrl && key === "z" && !e.shiftKey) || (!ctrl && key === "u")) {
    undo();
  } else if ((ctrl && (key === "y" || (key === "z" && e.shiftKey))) || (!ctrl && key === "r")) {
    redo();
  } else if (!ctrl && key === "n") {
    newGame();
  } else {
    return;
  }
  e.preventDefault();
}

// ---------------------------------------------------------------------------------------------
// Dragging: from the bin to place, or a board checker to move (pointer events, so mouse, pen
// and touch behave alike).

function onPointerDown(e) {
  state.suppressClick = false;
  if (e.button !== 0) return;
  const binChecker = e.target.closest("[data-bin-checker]");
  const cell = e.target.closest("#board .sq");
  if (!binChecker && !cell) return;
  // Nothing is redrawn here: a redraw between pointerdown and click could take the element
  // under the pointer away, and the browser would drop the click. The game, not the drawing,
  // decides what may be dragged; a running animation is finished when a drag really starts.
  let from = null;
  let dests;
  if (binChecker) {
    dests = legalNow()
      .filter((a) => a.from === null)
      .map((a) => a.to);
  } else {
    from = Number(cell.dataset.index);
    dests = destinationsOf(from);
  }
  if (!dests.length) return;
  state.drag = {
    from,
    dests,
    player: state.game.position.toMove,
    startX: e.clientX,
    startY: e.clientY,
    ghost: null,
    moved: false,
    fromBin: !!binChecker,
  };
  document.addEventListener("pointermove", onPointerMove);
  document.addEventListener("pointerup", onPointerUp);
  document.addEventListener("pointercancel", onPointerCancel);
  if (binChecker) e.preventDefault();
}

function onPointerMove(e) {
  const d = state.drag;
  if (!d) return;
  if (!d.moved && Math.hypot(e.clientX - d.startX, e.clientY - d.startY) < 5) return;
  if (!d.moved) {
    d.moved = true;
    finishAnimation(); // a drag starts: the board must show the position, not a pop in flight
    d.source = d.fromBin
      ? $(`bin-${P.PLAYERS[d.player]}`).querySelector("[data-bin-checker]")
      : cellAt(d.from)?.querySelector(".checker");
    d.ghost = checkerElement(d.player);
    d.ghost.classList.add("ghost");
    document.body.append(d.ghost);
    state.selected = d.from;
    drawBoard(state.game.position.board, { dests: d.dests });
    d.source?.classList.add("lifted"); // after the redraw, which clears it
  }
  d.ghost.style.left = `${e.clientX}px`;
  d.ghost.style.top = `${e.clientY}px`;
  for (const cell of cells()) cell.classList.remove("hover");
  const over = document.elementFromPoint(e.clientX, e.clientY)?.closest("#board .sq");
  if (over && d.dests.includes(Number(over.dataset.index))) over.classList.add("hover");
  e.preventDefault();
}

function endDrag() {
  const d = state.drag;
  document.removeEventListener("pointermove", onPointerMove);
  document.removeEventListener("pointerup", onPointerUp);
  document.removeEventListener("pointercancel", onPointerCancel);
  if (d?.ghost) d.ghost.remove();
  state.drag = null;
  return d;
}

function onPointerUp(e) {
  const d = endDrag();
  if (!d || !d.moved) return; // a plain click: the click handler deals with it
  // A click may follow the drag (on the squares' common ancestor); it must not act again.
  // The flag is dropped at the next pointerdown: a timer could fire after the next click, as
  // browsers run input before timers.
  state.suppressClick = true;
  state.selected = null;
  const over = document.elementFromPoint(e.clientX, e.clientY)?.closest("#board .sq");
  const to = over ? Number(over.dataset.index) : null;
  if (to !== null && d.dests.includes(to)) {
    play({ from: d.from, to });
  } else {
    render();
  }
}

function onPointerCancel() {
  endDrag();
  state.selected = null;
  render();
}

// ---------------------------------------------------------------------------------------------
// The pop, animated: the snapshot is drawn first, pushed checkers slide, fallen ones leave
// toward their bin or off the board, failed pushes nudge; then the position is drawn.

function animationsOn() {
  return (
    $("animate").checked && !window.matchMedia("(prefers-reduced-motion: reduce)").matches
  );
}

function finishAnimation() {
  const a = state.animation;
  if (!a) return;
  state.animation = null;
  for (const anim of a.animations) anim.cancel();
  render();
}

function cellVector(fromSq, dir) {
  const a = cellAt(fromSq).getBoundingClientRect();
  return [dir[1] * a.width, dir[0] * a.height];
}

function animate(outcome) {
  if (!animationsOn() || !outcome.pops) return;
  const rs = state.rs;
  drawBoard(outcome.snapshot, { landed: outcome.landed, from: outcome.from });
  const animations = [];
  const opts = { duration: ANIMATION_MS, easing: "cubic-bezier(.2,.7,.3,1)", fill: "forwards" };
  const landedEl = cellAt(outcome.landed).querySelector(".checker");
  if (landedEl) {
    animations.push(
      landedEl.animate(
        [{ transform: "scale(1.25)" }, { transform: "scale(1)" }],
        { duration: ANIMATION_MS * 0.6, easing: "ease-out" },
      ),
    );
  }
  for (const pop of outcome.pops) {
    const el = cellAt(pop.from).querySelector(".checker");
    if (!el) continue;
    const [dx, dy] = cellVector(pop.from, pop.dir);
    let frames;
    if (pop.kind === "push" && !pop.wrapped) {
      const a = cellAt(pop.from).getBoundingClientRect();
      const b = cellAt(pop.to).getBoundingClientRect();
      frames = [
        { transform: "translate(0,0)" },
        { transform: `translate(${b.left - a.left}px, ${b.top - a.top}px)` },
      ];
    } else if (pop.kind === "push") {
      // Across a wrapping edge: slide out one square and fade; it reappears on the far side.
      frames = [
        { transform: "translate(0,0)", opacity: 1 },
        { transform: `translate(${dx}px, ${dy}px)`, opacity: 0 },
      ];
      const target = cellAt(pop.to);
      const ghost = checkerElement(pop.player);
      ghost.classList.add("arriving");
      target.append(ghost);
      animations.push(
        ghost.animate(
          [
            { transform: `translate(${-dx}px, ${-dy}px)`, opacity: 0 },
            { transform: "translate(0,0)", opacity: 1 },
          ],
          opts,
        ),
      );
    } else if (pop.kind === "fall" && rs.edge === "reincarnation") {
      const a = el.getBoundingClientRect();
      const bin = $(`bin-${P.PLAYERS[pop.player]}`).getBoundingClientRect();
      frames = [
        { transform: "translate(0,0) scale(1)", opacity: 1 },
        { transform: `translate(${dx}px, ${dy}px) scale(.9)`, opacity: 1, offset: 0.35 },
        {
          transform: `translate(${bin.left + 40 - a.left}px, ${bin.top + 8 - a.top}px) scale(.5)`,
          opacity: 0.2,
        },
      ];
    } else if (pop.kind === "fall") {
      frames = [
        { transform: "translate(0,0) scale(1)", opacity: 1 },
        { transform: `translate(${dx * 1.6}px, ${dy * 1.6}px) scale(.3) rotate(90deg)`, opacity: 0 },
      ];
    } else {
      // blocked, occupied, shared: a nudge toward the target and back.
      frames = [
        { transform: "translate(0,0)" },
        { transform: `translate(${dx * 0.22}px, ${dy * 0.22}px)` },
        { transform: "translate(0,0)" },
      ];
      el.parentElement.classList.add("nudged");
    }
    animations.push(el.animate(frames, opts));
  }
  const token = {};
  state.animation = { animations, token };
  // Redraw when every animation has run (cancel() rejects, and then finishAnimation already
  // redrew). Animations fill forwards; finishAnimation cancels them to drop their transforms.
  Promise.all(animations.map((a) => a.finished)).then(
    () => {
      if (state.animation?.token === token) finishAnimation();
    },
    () => {},
  );
}

init();
