// The Replay page: steps through the certified line. Every position and every rule branch shown
// is computed here by pop.js (the browser engine) from the actions alone; the positions the
// Python engine computed at build time are only used to detect a disagreement.
import * as P from "./pop.js";

const $ = (id) => document.getElementById(id);
const data = JSON.parse($("replay-data").textContent);
const rs = P.parseRuleset(data.ruleset);

// frames[k]: the position after k steps, with the turn (applyAction's outcome) that led to it.
const frames = [{ position: P.initialPosition(rs), outcome: null, step: null }];
let problem = null;
{
  const history = [];
  let pos = frames[0].position;
  for (const step of data.steps) {
    const action = P.parseAction(rs, step.action);
    let outcome;
    try {
      outcome = P.applyAction(rs, pos, action, history);
    } catch (e) {
      problem = `ply ${step.ply}: ${e.message}`;
      break;
    }
    const text = P.formatPosition(rs, outcome.next);
    if (text !== step.after || (outcome.result ?? null) !== (step.result ?? null)) {
      problem =
        `ply ${step.ply} (${step.action}): the browser engine gives ${text} ` +
        `(${outcome.result ?? "game goes on"}), the Python engine ${step.after} ` +
        `(${step.result ?? "game goes on"})`;
      break;
    }
    frames.push({ position: outcome.next, outcome, step, action });
    history.push(pos);
    pos = outcome.next;
  }
}

// The page opens on the first position (the empty board), ready to play or step forward.
const state = { index: 0, timer: null, speed: 2 };
const board = $("replay-board");

function cell(sq) {
  return board.querySelector(`.sq[data-index="${sq}"]`);
}

function draw() {
  const last = frames.length - 1;
  const k = state.index;
  const frame = frames[k];
  const pos = frame.position;
  const before = k > 0 ? frames[k - 1].position : null;
  const out = frame.outcome;
  const inLine = new Set(out ? out.lines.flatMap((l) => l.squares) : []);
  // Checkers the pop pushed keep a mark once the step is shown.
  const pushed = new Set(out ? out.pops.filter((p) => p.kind === "push").map((p) => p.to) : []);
  for (const el of board.querySelectorAll(".sq")) {
    const sq = Number(el.dataset.index);
    const v = pos.board[sq];
    el.replaceChildren();
    if (v) {
      const c = document.createElement("span");
      c.className = `checker ${P.PLAYERS[v - 1]}`;
      c.setAttribute("aria-hidden", "true");
      el.append(c);
    }
    el.classList.toggle("clicked", !!frame.action && frame.action.to === sq);
    el.classList.toggle("from", !!frame.action && frame.action.from === sq);
    el.classList.toggle("changed", !!before && before.board[sq] !== v);
    el.classList.toggle("in-line", inLine.has(sq));
    el.classList.toggle("pushed", pushed.has(sq) && !!v);
  }
  board.dataset.position = P.formatPosition(rs, pos);
  board.dataset.step = String(state.index);
  board.setAttribute(
    "aria-label",
    `${k === 0 ? "The first position" : `Board after step ${k}`}: ${P.formatPosition(rs, pos)}`,
  );
  $("rp-counter").textContent =
    k === last ? `Step ${k} of ${last}: the end of the line` : `Step ${k} of ${last}`;
  $("rp-bins").textContent = `x's bin: ${pos.bins[0]} · o's bin: ${pos.bins[1]}`;
  explain(frame, k);
  for (const b of document.querySelectorAll("#rp-line button")) {
    b.classList.toggle("current", Number(b.dataset.goto) === k);
  }
  $("rp-prev").disabled = state.index === 0;
  $("rp-first").disabled = state.index === 0;
  $("rp-next").disabled = state.index === last;
  $("rp-last").disabled = state.index === last;
}

const BRANCH_ORDER = (b) =>
  b === "place" || b.startsWith("move_") ? 0 : b.startsWith("line_") ? 2 : 1;

function explain(frame, k) {
  const list = $("rp-branches");
  list.replaceChildren();
  const status = $("rp-status");
  const branches = frame.outcome ? [...frame.outcome.branches].sort((a, b) => BRANCH_ORDER(a) - BRANCH_ORDER(b)) : [];
  if (!frame.step) {
    $("rp-action").textContent = "The empty board, x to move. Press Play, or step forward with ▶ or →.";
  } else {
    const s = frame.step;
    const verb = frame.action.from === null ? "places on" : "moves";
    $("rp-action").textContent =
      `Ply ${s.ply}: ${s.mover} ${verb} ${s.action}` +
      (s.rank !== null && s.rank !== undefined ? ` (certificate rank ${s.rank})` : "") +
      ".";
  }
  for (const b of branches) {
    const li = document.createElement("li");
    li.dataset.branch = b;
    const rule = data.branch_rule[b];
    const a = document.createElement("a");
    a.href = `#rule-${rule}`;
    a.textContent = b;
    li.append(a);
    if (data.branch_words[b]) li.append(`: ${data.branch_words[b]}`);
    list.append(li);
  }
  const on = new Set(branches);
  for (const rule of document.querySelectorAll(".rule")) {
    const names = rule.dataset.branches.split(" ");
    rule.classList.toggle("hit", names.some((n) => on.has(n)));
  }
  for (const chip of document.querySelectorAll(".rule .chip")) {
    chip.classList.toggle("hit", on.has(chip.dataset.branch));
  }
  const result = frame.outcome ? frame.outcome.result : null;
  status.dataset.status = result ?? "";
  if (result === "draw") status.textContent = "The game is a draw.";
  else if (result) status.textContent = `${result} wins: the end of the certified line.`;
  else if (frame.outcome && frame.outcome.branches.includes("stuck_pass")) {
    status.textContent = `${P.PLAYERS[frame.position.toMove === 0 ? 1 : 0]} has no legal action and passes.`;
  } else status.textContent = k ? `${P.PLAYERS[frame.position.toMove]} to move.` : "";
}

function go(k) {
  state.index = Math.max(0, Math.min(frames.length - 1, k));
  draw();
}

function stop() {
  if (state.timer !== null) clearInterval(state.timer);
  state.timer = null;
  $("rp-play").textContent = "Play";
  $("rp-play").setAttribute("aria-pressed", "false");
}

function start() {
  // Play at the end of the line starts again from the first position.
  if (state.index === frames.length - 1) go(0);
  stop();
  $("rp-play").textContent = "Pause";
  $("rp-play").setAttribute("aria-pressed", "true");
  state.timer = setInterval(() => {
    if (state.index >= frames.length - 1) {
      stop();
      return;
    }
    go(state.index + 1);
    if (state.index >= frames.length - 1) stop();
  }, 1000 / state.speed);
}

function toggle() {
  if (state.timer === null) start();
  else stop();
}

function setSpeed(speed) {
  state.speed = speed;
  for (const b of document.querySelectorAll(".speed")) {
    b.setAttribute("aria-checked", Number(b.dataset.speed) === speed ? "true" : "false");
  }
  if (state.timer !== null) start();
}

function boardOnScreen() {
  const r = board.getBoundingClientRect();
  return r.bottom > 0 && r.top < window.innerHeight;
}

function onKey(e) {
  const tag = (e.target.tagName || "").toLowerCase();
  if (["input", "textarea", "select"].includes(tag) || e.ctrlKey || e.metaKey || e.altKey) return;
  if (!boardOnScreen()) return;
  if (e.key === "ArrowRight") {
    stop();
    go(state.index + 1);
  } else if (e.key === "ArrowLeft") {
    stop();
    go(state.index - 1);
  } else if (e.key === " ") {
    toggle();
  } else if (e.key === "Home") {
    stop();
    go(0);
  } else if (e.key === "End") {
    stop();
    go(frames.length - 1);
  } else {
    return;
  }
  e.preventDefault(); // Space would scroll the page, arrows too
}

function init() {
  if (problem) {
    const el = $("rp-error");
    el.textContent = `The replay stops early: ${problem}.`;
    el.hidden = false;
  }
  $("rp-first").addEventListener("click", () => (stop(), go(0)));
  $("rp-prev").addEventListener("click", () => (stop(), go(state.index - 1)));
  $("rp-next").addEventListener("click", () => (stop(), go(state.index + 1)));
  $("rp-last").addEventListener("click", () => (stop(), go(frames.length - 1)));
  $("rp-play").addEventListener("click", toggle);
  for (const b of document.querySelectorAll(".speed")) {
    b.addEventListener("click", () => setSpeed(Number(b.dataset.speed)));
  }
  $("rp-line").addEventListener("click", (e) => {
    const b = e.target.closest("button[data-goto]");
    if (!b) return;
    stop();
    go(Number(b.dataset.goto));
  });
  // Buttons keep focus after a click; Space on a focused button would press it as well as
  // toggling play, so the page-level handler runs first and the button ignores the key.
  for (const b of document.querySelectorAll("#replay-root button")) {
    b.addEventListener("keydown", (e) => {
      if (e.key === " ") e.preventDefault();
    });
    b.addEventListener("keyup", (e) => {
      if (e.key === " ") e.preventDefault();
    });
  }
  document.addEventListener("keydown", onKey);
  document.documentElement.style.setProperty("--board-cols", rs.cols);
  const size = Math.max(40, Math.min(72, Math.floor(Math.min(document.documentElement.clientWidth - 80, 420) / rs.cols)));
  document.documentElement.style.setProperty("--cell", `${size}px`);
  draw();
}

init();
