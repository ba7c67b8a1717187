// solved.js: values of positions for rulesets the solver has solved completely, read from the
// tables the site builder ships (harness/site/solved.py describes the format). Every rule
// question (legal actions, what an action does) goes to pop.js; this module only looks up.
import * as P from "./pop.js";

export const OUTCOME_SHIFT = 14;

/** Parse a table: `meta` is the ID.json object, `buffer` the ID.bin bytes (ArrayBuffer). */
export function parseTable(meta, buffer) {
  const n = meta.classes;
  const kb = meta.key_bytes;
  if (kb !== 4 && kb !== 8) throw new P.PopError(`solved table: key width ${kb} unknown`);
  if (buffer.byteLength !== n * (kb + 2)) {
    throw new P.PopError(
      `solved table ${meta.ruleset}: ${buffer.byteLength} bytes, expected ${n * (kb + 2)}`,
    );
  }
  // DataView reads little-endian whatever the machine's byte order.
  const view = new DataView(buffer);
  const keys = new Float64Array(n);
  const values = new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    keys[i] = kb === 4 ? view.getUint32(i * 4, true) : view.getFloat64(i * 8, true);
    values[i] = view.getUint16(n * kb + i * 2, true);
  }
  return { meta, rs: P.parseRuleset(meta.ruleset), keys, values };
}

/** Fetch and parse the table whose ID.json is at `metaUrl` (a path inside the site). */
export async function loadTable(metaUrl) {
  const metaResponse = await fetch(metaUrl);
  if (!metaResponse.ok) throw new P.PopError(`solved table: ${metaUrl}: ${metaResponse.status}`);
  const meta = await metaResponse.json();
  const binUrl = new URL(meta.table, new URL(metaUrl, location.href)).href;
  const binResponse = await fetch(binUrl);
  if (!binResponse.ok) throw new P.PopError(`solved table: ${meta.table}: ${binResponse.status}`);
  return parseTable(meta, await binResponse.arrayBuffer());
}

/** The table key of a position (see solved.py): least base-3 image seen from the mover. */
export function siteKey(table, pos) {
  const rs = table.rs;
  const me = pos.toMove + 1;
  let best = Infinity;
  for (const perm of table.meta.symmetries) {
    const image = new Array(rs.size);
    for (let sq = 0; sq < rs.size; sq++) {
      const v = pos.board[sq];
      image[perm[sq]] = v === 0 ? 0 : v === me ? 1 : 2;
    }
    let number = 0;
    for (let sq = rs.size - 1; sq >= 0; sq--) number = number * 3 + image[sq];
    if (number < best) best = number;
  }
  const base = rs.checkers + 1;
  return (best * base + pos.bins[pos.toMove]) * base + pos.bins[1 - pos.toMove];
}

function find(keys, key) {
  let lo = 0;
  let hi = keys.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (keys[mid] === key) return mid;
    if (keys[mid] < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/**
 * The value of a position with best play, judged from the position alone (no history):
 * {winner: "x" | "o" | "draw", plies} (plies null for a draw), or null when the position is
 * not reachable from the initial one (the table holds only reachable positions).
 */
export function valueOf(table, pos) {
  const i = find(table.keys, siteKey(table, pos));
  if (i < 0) return null;
  const v = table.values[i];
  const outcome = v >> OUTCOME_SHIFT;
  const plies = v & ((1 << OUTCOME_SHIFT) - 1);
  const mover = P.PLAYERS[pos.toMove];
  const other = P.PLAYERS[1 - pos.toMove];
  if (outcome === 0) return { winner: "draw", plies: null };
  return { winner: outcome === 1 ? mover : other, plies };
}

/**
 * Every legal action of `pos` with its value: {action, text, winner, plies}, plies counted
 * from `pos` (the action included). Like the solver's values, repetition is ignored.
 * Returns null when some successor is missing from the table (`pos` is not reachable).
 */
export function ratedActions(table, pos) {
  const rs = table.rs;
  const out = [];
  for (const action of P.legalActions(rs, pos)) {
    const turn = P.applyAction(rs, pos, action);
    const text = P.formatAction(rs, action);
    if (turn.result !== null) {
      out.push({ action, text, winner: turn.result, plies: turn.result === "draw" ? null : 1 });
      continue;
    }
    const v = valueOf(table, turn.next);
    if (v === null) return null;
    out.push({ action, text, winner: v.winner, plies: v.plies === null ? null : v.plies + 1 });
  }
  return out;
}

/** How good a rated action is for `mover`: the fastest win, else a draw, else the slowest loss. */
export function score(rated, mover) {
  if (rated.winner === mover) return [2, -rated.plies];
  if (rated.winner === "draw") return [1, 0];
  return [0, rated.plies];
}

function better(a, b) {
  return a[0] !== b[0] ? a[0] > b[0] : a[1] > b[1];
}

/** An optimal action (the first of the best, in legal-action order), or null. */
export function bestAction(table, pos) {
  const rated = ratedActions(table, pos);
  if (!rated || !rated.length) return null;
  const mover = P.PLAYERS[pos.toMove];
  let best = rated[0];
  let bestScore = score(best, mover);
  for (const r of rated.slice(1)) {
    const s = score(r, mover);
    if (better(s, bestScore)) {
      best = r;
      bestScore = s;
    }
  }
  return best;
}
