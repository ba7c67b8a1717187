/-!
# Pop on `Nat` bitboards: every edge surface, the research movement

The rules of RULES.md for `pop1-RxC-cN-EDGE-continue-binempty-king-nozero-nojump`, for every
edge (`reincarnation`, `ringout`, `blocked`, `torus`, `klein`).

* The board is `rows × cols` (RULES.md asks `3 ≤ rows, cols ≤ 8`, so `rows * cols ≤ 64`);
  square `sq = row * cols + col`, `a1 = 0` top-left; a bitboard has bit `sq` for a checker on `sq`.
* A position holds both bitboards, both bins and the player to move.
* An action is a `Nat` code: a placement on `dst` is `dst`; a king move `src → dst` is
  `dst + size * (src + 1)`. Codes of `legal` come out in increasing order.
* The game is played on a `Geo`, the tables of a ruleset (pop rays of every landing square, king
  moves of every source, line maps). `Geo.of c` computes them from RULES.md's `step` on the
  edge surface (`surfStep`); this is the definition of the game. A rendered certificate carries
  the same tables as literals and proves, by `decide +kernel`, that they equal `Geo.of c`.
* `step` plays one turn: land, the simultaneous pop, lines, the `ringout` count, results, and
  the pass of *Stuck* under `continue` (folded into the turn, as RULES.md says).
* Repetition is not modelled: values are judged without history (see `docs/lean.md`).

Everything the kernel evaluates in a certificate check is structural recursion on lists or an
explicit count, `cond`/`match` on `Bool` and constructors, and the `Nat` functions the kernel
runs with GMP (`Nat.add/sub/mul/div/mod/beq/ble/land/lor/xor/shiftLeft/shiftRight`), called
by name, not through the `+ - * / %` notation (whose instances the kernel would unfold).
-/

namespace Pop

/-- The two players; `x` moves first. -/
inductive Side where
  | x
  | o
  deriving Repr, DecidableEq

/-- The other player. -/
def Side.other : Side → Side
  | .x => .o
  | .o => .x

/-- Boolean equality of sides, by matching (no instance search in evaluated code). -/
def Side.beq : Side → Side → Bool
  | .x, .x => true
  | .o, .o => true
  | .x, .o => false
  | .o, .x => false

/-- The edge surfaces of RULES.md. -/
inductive Edge where
  | reincarnation
  | ringout
  | blocked
  | torus
  | klein
  deriving Repr, DecidableEq

/-- A ruleset of the research movement (continue, binempty, king, nozero, nojump): board
size, checkers per player and edge. -/
structure Cfg where
  rows : Nat
  cols : Nat
  checkers : Nat
  edge : Edge
  deriving Repr, DecidableEq

/-- Number of squares. -/
def Cfg.size (c : Cfg) : Nat := Nat.mul c.rows c.cols

/-- `bit sq` is the bitboard with only `sq` set. -/
def bit (sq : Nat) : Nat := Nat.shiftLeft 1 sq

/-- Is square `sq` set in bitboard `b`? -/
def has (b sq : Nat) : Bool := Nat.beq (Nat.land (Nat.shiftRight b sq) 1) 1

/-! ## The edge surface (the definitions the tables come from) -/

/-- The eight directions as `(dr + 1, dc + 1)`, so that `Nat` holds them; in row-major order,
which makes king destinations come out in increasing square order. -/
def dirs : List (Nat × Nat) :=
  [(0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1), (2, 2)]

/-- The four line directions, as `(dr + 1, dc + 1)`: horizontal, vertical, diagonal,
antidiagonal. -/
def lineDirs : List (Nat × Nat) := [(1, 2), (2, 1), (2, 2), (2, 0)]

/-- A step on the plain grid (movement, and the non-wrapping edges): `none` off the board. -/
def gridStep (c : Cfg) (sq : Nat) (d : Nat × Nat) : Option Nat :=
  let r := sq / c.cols + d.1
  let k := sq % c.cols + d.2
  if r = 0 ∨ k = 0 ∨ c.rows + 1 ≤ r ∨ c.cols + 1 ≤ k then none
  else some ((r - 1) * c.cols + (k - 1))

/-- RULES.md's `step` on the edge surface: the square reached and the direction after the step
(the Klein twist mirrors the column and flips the column part of the direction). -/
def surfStep (c : Cfg) (sq : Nat) (d : Nat × Nat) : Option (Nat × (Nat × Nat)) :=
  let r := sq / c.cols + d.1
  let k := (sq % c.cols + c.cols + d.2 - 1) % c.cols
  match c.edge with
  | .torus => some (((r + c.rows - 1) % c.rows) * c.cols + k, d)
  | .klein =>
    if r = 0 ∨ c.rows + 1 ≤ r then
      some (((r + c.rows - 1) % c.rows) * c.cols + (c.cols - 1 - k), (d.1, 2 - d.2))
    else some ((r - 1) * c.cols + k, d)
  | _ =>
    match gridStep c sq d with
    | some t => some (t, d)
    | none => none

/-- One direction of a pop from a landing square, as the tables hold it: the neighbour `n` and
its push target `t` on the board, or (`reincarnation`, `ringout`) a neighbour whose target is
off the board, which falls. On `blocked` such a neighbour stays, so the direction is left out. -/
inductive Ray where
  | push (n t : Nat)
  | fall (n : Nat)
  deriving Repr, DecidableEq

/-- The ray of direction `d` from landing square `l`, if the direction does anything. -/
def rayOf (c : Cfg) (l : Nat) (d : Nat × Nat) : List Ray :=
  match surfStep c l d with
  | none => []
  | some (n, d') =>
    match surfStep c n d' with
    | some (t, _) => [.push n t]
    | none =>
      match c.edge with
      | .blocked => []
      | _ => [.fall n]

/-- The rays of every direction from `l`, in direction order. -/
def raysFrom (c : Cfg) (l : Nat) : List (Nat × Nat) → List Ray
  | [] => []
  | d :: ds => rayOf c l d ++ raysFrom c l ds

/-- Action code of a king move. -/
def moveCode (c : Cfg) (src dst : Nat) : Nat := dst + c.size * (src + 1)

/-- King moves from `src` on the plain grid, in direction order: `(destination, code)`. -/
def kingFrom (c : Cfg) (src : Nat) : List (Nat × Nat) → List (Nat × Nat)
  | [] => []
  | d :: ds =>
    match gridStep c src d with
    | some t => (t, moveCode c src t) :: kingFrom c src ds
    | none => kingFrom c src ds

/-- `tabulate f i k = [f i, f (i+1), …, f (i+k-1)]`, structural on `k`. -/
def tabulate {α : Type} (f : Nat → α) : Nat → Nat → List α
  | _, 0 => []
  | i, k + 1 => f i :: tabulate f (i + 1) k

/-- A group of a line map: the squares `mask` whose partner is `amt` squares further on
(`right`) or back. `pull` turns a bitboard `b` into the set of squares whose partner is in `b`. -/
structure Shift where
  mask : Nat
  right : Bool
  amt : Nat
  deriving Repr, DecidableEq

/-- Boolean equality of `Bool`s, by matching. -/
def boolEq : Bool → Bool → Bool
  | true, true => true
  | false, false => true
  | true, false => false
  | false, true => false

/-- Add square bit `b` to the group `(right, amt)`, creating it at the end if new. -/
def addShift (right : Bool) (amt b : Nat) : List Shift → List Shift
  | [] => [⟨b, right, amt⟩]
  | g :: gs =>
    if boolEq g.right right && Nat.beq g.amt amt then ⟨Nat.lor g.mask b, right, amt⟩ :: gs
    else g :: addShift right amt b gs

/-- The groups of the map `f` over squares `s, s+1, …, s+k-1`, added to `acc`. -/
def shiftsOf (f : Nat → Option Nat) : Nat → Nat → List Shift → List Shift
  | _, 0, acc => acc
  | s, k + 1, acc =>
    shiftsOf f (s + 1) k
      (match f s with
       | none => acc
       | some t => if s ≤ t then addShift true (t - s) (bit s) acc
                   else addShift false (s - t) (bit s) acc)

/-- The second square of a line from `s` in direction `d`. -/
def lineFirst (c : Cfg) (d : Nat × Nat) (s : Nat) : Option Nat :=
  match surfStep c s d with
  | some (t, _) => some t
  | none => none

/-- The third square of a line from `s` in direction `d` (the direction after the first step). -/
def lineSecond (c : Cfg) (d : Nat × Nat) (s : Nat) : Option Nat :=
  match surfStep c s d with
  | some (t, d') =>
    match surfStep c t d' with
    | some (u, _) => some u
    | none => none
  | none => none

/-- The line maps of direction `d`: a line stands on `S, step S, step (step S)` in `b` iff
`S ∈ b ∩ pull b first ∩ pull b second`. -/
def lineMaps (c : Cfg) (d : Nat × Nat) : List Shift × List Shift :=
  (shiftsOf (lineFirst c d) 0 c.size [], shiftsOf (lineSecond c d) 0 c.size [])

/-- The tables of a ruleset: what `legal` and `step` read. -/
structure Geo where
  cfg : Cfg
  /-- `rows * cols`. -/
  size : Nat
  /-- `2 ^ size`: keys hold bitboards in base `span`. -/
  span : Nat
  /-- The pop rays of every landing square. -/
  rays : List (List Ray)
  /-- The king moves `(destination, code)` of every source square. -/
  king : List (List (Nat × Nat))
  /-- The line maps of the four line directions. -/
  lines : List (List Shift × List Shift)
  deriving Repr, DecidableEq

/-- The tables of `c`, computed from the definitions above: the game of ruleset `c`. -/
def Geo.of (c : Cfg) : Geo :=
  { cfg := c
    size := c.size
    span := bit c.size
    rays := tabulate (fun l => raysFrom c l dirs) 0 c.size
    king := tabulate (fun src => kingFrom c src dirs) 0 c.size
    lines := lineDirs.map (lineMaps c) }

/-! ## Positions and the evaluated game -/

/-- A position: bitboards of `x` and `o`, their bins, and the player to move. -/
structure Pos where
  x : Nat
  o : Nat
  xbin : Nat
  obin : Nat
  turn : Side
  deriving Repr

/-- The initial position: empty board, full bins, `x` to move. -/
def Pos.initial (c : Cfg) : Pos :=
  { x := 0, o := 0, xbin := c.checkers, obin := c.checkers, turn := .x }

/-- The mover's bitboard. -/
def Pos.mine (s : Pos) : Nat :=
  match s.turn with
  | .x => s.x
  | .o => s.o

/-- The opponent's bitboard. -/
def Pos.theirs (s : Pos) : Nat :=
  match s.turn with
  | .x => s.o
  | .o => s.x

/-- The mover's bin. -/
def Pos.bin (s : Pos) : Nat :=
  match s.turn with
  | .x => s.xbin
  | .o => s.obin

/-- The opponent's bin. -/
def Pos.theirBin (s : Pos) : Nat :=
  match s.turn with
  | .x => s.obin
  | .o => s.xbin

/-- Occupied squares. -/
def Pos.occ (s : Pos) : Nat := Nat.lor s.x s.o

/-- The element at index `i`, or `d` past the end (structural on the list). -/
def pick {α : Type} (d : α) : List α → Nat → α
  | [], _ => d
  | a :: _, 0 => a
  | _ :: l, i + 1 => pick d l i

/-- `List.append`, called by name. -/
def app (a b : List Nat) : List Nat := List.append a b

/-- Placements on the empty squares among `i, i+1, …, i+k-1`. -/
def placements (occ : Nat) : Nat → Nat → List Nat
  | _, 0 => []
  | i, k + 1 =>
    cond (has occ i) (placements occ (Nat.add i 1) k) (i :: placements occ (Nat.add i 1) k)

/-- The codes of the king moves in `ms` to empty squares. -/
def kingTo (occ : Nat) : List (Nat × Nat) → List Nat
  | [] => []
  | m :: ms => cond (has occ m.1) (kingTo occ ms) (m.2 :: kingTo occ ms)

/-- King moves of the checkers in `mine`, sources from `src` on (the table from `src` on). -/
def kingMoves (mine occ : Nat) : Nat → List (List (Nat × Nat)) → List Nat
  | _, [] => []
  | src, ms :: rest =>
    cond (has mine src) (app (kingTo occ ms) (kingMoves mine occ (Nat.add src 1) rest))
      (kingMoves mine occ (Nat.add src 1) rest)

/-- Every legal action of the player to move, as codes in increasing order: placements on
every empty square while the mover's bin is not empty, king moves once it is empty. -/
def legal (g : Geo) (s : Pos) : List Nat :=
  cond (Nat.beq s.bin 0) (kingMoves s.mine s.occ 0 g.king) (placements s.occ 0 g.size)

/-- First pass of the pop: the squares targeted by two or more pushes. `seen` collects targets
of pushes met so far (a push exists where the neighbour is occupied; a fall targets nothing). -/
def sharedTargets (occ : Nat) : List Ray → Nat → Nat → Nat
  | [], _, twice => twice
  | .push n t :: rs, seen, twice =>
    cond (has occ n)
      (sharedTargets occ rs (Nat.lor seen (bit t)) (Nat.lor twice (Nat.land seen (bit t))))
      (sharedTargets occ rs seen twice)
  | .fall _ :: rs, seen, twice => sharedTargets occ rs seen twice

/-- The boards during a pop: the mover's and the opponent's, and how many checkers of each
fell off the board. -/
structure Boards where
  mine : Nat
  theirs : Nat
  mineFell : Nat
  theirsFell : Nat

/-- Move the checker on `n` to `t` (the owner is whoever holds `n`). -/
def Boards.push (b : Boards) (n t : Nat) : Boards :=
  cond (has b.mine n)
    ⟨Nat.lor (Nat.xor b.mine (bit n)) (bit t), b.theirs, b.mineFell, b.theirsFell⟩
    ⟨b.mine, Nat.lor (Nat.xor b.theirs (bit n)) (bit t), b.mineFell, b.theirsFell⟩

/-- Take the checker on `n` off the board. -/
def Boards.fall (b : Boards) (n : Nat) : Boards :=
  cond (has b.mine n)
    ⟨Nat.xor b.mine (bit n), b.theirs, Nat.add b.mineFell 1, b.theirsFell⟩
    ⟨b.mine, Nat.xor b.theirs (bit n), b.mineFell, Nat.add b.theirsFell 1⟩

/-- Second pass: apply every push that succeeds on the snapshot `occ` (neighbour occupied,
target empty, target not shared) and every fall. Decisions read only the snapshot, so applying
them one after another equals applying them together: targets are empty in the snapshot and
neighbours occupied, so no push lands on a square another ray leaves or reads. -/
def pushAll (occ twice : Nat) : List Ray → Boards → Boards
  | [], b => b
  | .push n t :: rs, b =>
    cond (has occ n && !(has occ t) && !(has twice t)) (pushAll occ twice rs (b.push n t))
      (pushAll occ twice rs b)
  | .fall n :: rs, b => cond (has occ n) (pushAll occ twice rs (b.fall n)) (pushAll occ twice rs b)

/-- The squares whose partner under the map `gs` is in `b`. -/
def pull (b : Nat) : List Shift → Nat
  | [] => 0
  | g :: gs =>
    Nat.lor (Nat.land g.mask (cond g.right (Nat.shiftRight b g.amt) (Nat.shiftLeft b g.amt)))
      (pull b gs)

/-- Three in a row on the edge surface, in any of the line directions. The second map is
pulled only when some square of `b` has its first partner in `b` too. -/
def hasLine : List (List Shift × List Shift) → Nat → Bool
  | [], _ => false
  | m :: ms, b =>
    let b1 := Nat.land b (pull b m.1)
    cond (Nat.beq b1 0) (hasLine ms b)
      (cond (Nat.beq (Nat.land b1 (pull b m.2)) 0) (hasLine ms b) true)

/-- Number of set bits of a bitboard below `2^64` (the board has at most 64 squares). -/
def popcount (b : Nat) : Nat :=
  let b1 := Nat.sub b (Nat.land (Nat.shiftRight b 1) 0x5555555555555555)
  let b2 := Nat.add (Nat.land b1 0x3333333333333333)
    (Nat.land (Nat.shiftRight b1 2) 0x3333333333333333)
  let b3 := Nat.land (Nat.add b2 (Nat.shiftRight b2 4)) 0x0f0f0f0f0f0f0f0f
  Nat.mod (Nat.shiftRight (Nat.mul b3 0x0101010101010101) 56) 256

/-- How a game ends. -/
inductive Result where
  | win (p : Side)
  | draw
  deriving Repr

/-- A turn's outcome: the next position (turn as handed over; after a game-ending action, the
mover's opponent to move) and the result if the game ended. -/
structure Outcome where
  next : Pos
  result : Option Result

/-- Reassemble a position after the mover's turn, handing the turn to the opponent. -/
def Pos.handOver (s : Pos) (mine theirs bin theirBin : Nat) : Pos :=
  match s.turn with
  | .x => { x := mine, o := theirs, xbin := bin, obin := theirBin, turn := .o }
  | .o => { x := theirs, o := mine, xbin := theirBin, obin := bin, turn := .x }

/-- Does the list have an element? -/
def nonEmpty : List Nat → Bool
  | [] => false
  | _ :: _ => true

/-- After a turn that did not end the game: the opponent moves; if stuck, the mover moves
again (a pass, not a ply); if both are stuck, a draw. -/
def settle (g : Geo) (h : Pos) (mover : Side) : Outcome :=
  cond (nonEmpty (legal g h)) ⟨h, none⟩
    (cond (nonEmpty (legal g { h with turn := mover })) ⟨{ h with turn := mover }, none⟩
      ⟨h, some .draw⟩)

/-- Does the edge return fallen checkers to their owner's bin? -/
def Edge.returns : Edge → Bool
  | .reincarnation => true
  | _ => false

/-- `ringout`, RULES.md 5.2: a player with fewer than 3 surviving checkers (board and bin)
loses; both at once is a draw. On the other edges no checker leaves the game. -/
def ringoutResult (e : Edge) (h : Pos) (mover : Side) : Option Result :=
  match e with
  | .ringout =>
    let mShort := Nat.ble (Nat.add (popcount (Pos.mine { h with turn := mover }))
      (Pos.bin { h with turn := mover })) 2
    let tShort := Nat.ble (Nat.add (popcount h.mine) h.bin) 2
    cond mShort (cond tShort (some .draw) (some (.win mover.other)))
      (cond tShort (some (.win mover)) none)
  | _ => none

/-- After the lines: the `ringout` count, then *Stuck*. -/
def afterLines (g : Geo) (h : Pos) (mover : Side) : Outcome :=
  match ringoutResult g.cfg.edge h mover with
  | some r => ⟨h, some r⟩
  | none => settle g h mover

/-- One turn: action `a` (a code of `legal g s`) in `s`. Land, pop, lines, results, stuck. -/
def step (g : Geo) (s : Pos) (a : Nat) : Outcome :=
  let dst := Nat.mod a g.size
  let src1 := Nat.div a g.size
  let placing := Nat.beq src1 0
  let m1 := Nat.lor (cond placing s.mine (Nat.xor s.mine (bit (Nat.sub src1 1)))) (bit dst)
  let bin := cond placing (Nat.sub s.bin 1) s.bin
  let occ := Nat.lor m1 s.theirs
  let rays := pick [] g.rays dst
  let b := pushAll occ (sharedTargets occ rays 0 0) rays ⟨m1, s.theirs, 0, 0⟩
  let back := g.cfg.edge.returns
  let h := s.handOver b.mine b.theirs (cond back (Nat.add bin b.mineFell) bin)
    (cond back (Nat.add s.theirBin b.theirsFell) s.theirBin)
  let lm := hasLine g.lines b.mine
  let lt := hasLine g.lines b.theirs
  cond lm (cond lt ⟨h, some .draw⟩ ⟨h, some (.win s.turn)⟩)
    (cond lt ⟨h, some (.win s.turn.other)⟩ (afterLines g h s.turn))

/-- A node of the game graph: a live position, or a game over with its result. -/
inductive Node where
  | live (s : Pos)
  | over (r : Result)

/-- The node an outcome leads to. -/
def Outcome.node (o : Outcome) : Node :=
  match o.result with
  | some r => .over r
  | none => .live o.next

/-- RULES.md's force-win predicate on the game `g`, the least one closed under these rules: the
game has just ended with `p` winning; or `p` is to move and some legal action leads to a
force-win node; or the opponent is to move, has a legal action, and every legal action leads to
one. A pass is already folded into `step`. Being inductive, it only admits finite wins. The
game of a ruleset `c` is `ForceWin (Geo.of c)`. -/
inductive ForceWin (g : Geo) (p : Side) : Node → Prop where
  | won : ForceWin g p (.over (.win p))
  | choose (s : Pos) (a : Nat) :
      s.turn = p → a ∈ legal g s → ForceWin g p (step g s a).node → ForceWin g p (.live s)
  | every (s : Pos) :
      s.turn = p.other → legal g s ≠ [] →
      (∀ a, a ∈ legal g s → ForceWin g p (step g s a).node) → ForceWin g p (.live s)

end Pop
