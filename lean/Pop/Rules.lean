/-!
# Pop, research family, on `Nat` bitboards

The rules of RULES.md for the research family only:
`pop1-RxC-cN-torus-continue-binempty-king-nozero-nojump`.

* The board is `rows × cols` (RULES.md asks `3 ≤ rows, cols ≤ 8`, so `rows * cols ≤ 64`);
  square `sq = row * cols + col`, `a1 = 0` top-left; a bitboard has bit `sq` for a checker on `sq`.
* A position holds both bitboards, both bins and the player to move.
* An action is a `Nat` code: a placement on `dst` is `dst`; a king move `src → dst` is
  `dst + size * (src + 1)`. Codes of `legal` come out in increasing order.
* `step` plays one turn: land, the simultaneous pop on the torus, lines, results, and the pass
  of *Stuck* under `continue` (folded into the turn, as RULES.md says).
* Repetition is not modelled: values are judged without history; certificates rule it out with
  ranks that strictly decrease along every play.

Everything the kernel evaluates here is plain structural recursion (on lists of directions or an
explicit square count) and `Nat` arithmetic that the kernel runs with GMP.
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

/-- A research-family ruleset: board size and checkers per player. The other fields of the
ruleset identifier are fixed: torus, continue, binempty, king, nozero, nojump. -/
structure Cfg where
  rows : Nat
  cols : Nat
  checkers : Nat
  deriving Repr

/-- Number of squares. -/
def Cfg.size (c : Cfg) : Nat := c.rows * c.cols

/-- `bit sq` is the bitboard with only `sq` set. -/
def bit (sq : Nat) : Nat := Nat.shiftLeft 1 sq

/-- All squares of the board set. -/
def Cfg.full (c : Cfg) : Nat := bit c.size - 1

/-- Is square `sq` set in bitboard `b`? -/
def has (b sq : Nat) : Bool := Nat.beq (Nat.land (Nat.shiftRight b sq) 1) 1

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

/-- Occupied squares. -/
def Pos.occ (s : Pos) : Nat := Nat.lor s.x s.o

/-- The eight directions as `(dr + 1, dc + 1)`, so that `Nat` holds them; in row-major order,
which makes king destinations come out in increasing square order. -/
def dirs : List (Nat × Nat) :=
  [(0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1), (2, 2)]

/-- `collect f i k = f i ++ f (i+1) ++ … ++ f (i+k-1)`, structural on `k`. -/
def collect (f : Nat → List Nat) : Nat → Nat → List Nat
  | _, 0 => []
  | i, k + 1 => f i ++ collect f (i + 1) k

/-- A step on the plain grid (movement never wraps): `none` off the board. -/
def gridStep (c : Cfg) (sq : Nat) (d : Nat × Nat) : Option Nat :=
  let r := sq / c.cols + d.1
  let k := sq % c.cols + d.2
  if Nat.beq r 0 || Nat.beq k 0 || Nat.ble (c.rows + 1) r || Nat.ble (c.cols + 1) k then none
  else some ((r - 1) * c.cols + (k - 1))

/-- A step on the torus (pops and lines wrap): rows and columns taken modulo the board. -/
def torusStep (c : Cfg) (sq : Nat) (d : Nat × Nat) : Nat :=
  ((sq / c.cols + c.rows + d.1 - 1) % c.rows) * c.cols + (sq % c.cols + c.cols + d.2 - 1) % c.cols

/-- Action code of a king move. -/
def moveCode (c : Cfg) (src dst : Nat) : Nat := dst + c.size * (src + 1)

/-- King moves from `src` to empty neighbours on the plain grid, in direction order. -/
def kingMoves (c : Cfg) (occ src : Nat) : List (Nat × Nat) → List Nat
  | [] => []
  | d :: ds =>
    match gridStep c src d with
    | some t =>
      if has occ t then kingMoves c occ src ds else moveCode c src t :: kingMoves c occ src ds
    | none => kingMoves c occ src ds

/-- Every legal action of the player to move, as codes in increasing order: placements on
every empty square while the mover's bin is not empty, king moves once it is empty. -/
def legal (c : Cfg) (s : Pos) : List Nat :=
  if Nat.beq s.bin 0 then
    collect (fun src => if has s.mine src then kingMoves c s.occ src dirs else []) 0 c.size
  else
    collect (fun sq => if has s.occ sq then [] else [sq]) 0 c.size

/-- First pass of the pop from landing square `l`: the squares targeted by two or more pushes.
`seen` collects targets of pushes met so far (a push exists where the neighbour is occupied). -/
def sharedTargets (c : Cfg) (occ l : Nat) : List (Nat × Nat) → Nat → Nat → Nat
  | [], _, twice => twice
  | d :: ds, seen, twice =>
    let n := torusStep c l d
    if has occ n then
      let t := bit (torusStep c n d)
      sharedTargets c occ l ds (Nat.lor seen t) (Nat.lor twice (Nat.land seen t))
    else sharedTargets c occ l ds seen twice

/-- Second pass: apply every push that succeeds on the snapshot `occ` (neighbour occupied,
target empty, target not shared). Decisions read only the snapshot, so applying them one after
another equals applying them together: targets are empty in the snapshot, so no push lands on a
square another push leaves or reads. Returns the mover's and the opponent's new bitboards. -/
def pushAll (c : Cfg) (occ l twice : Nat) : List (Nat × Nat) → Nat → Nat → Nat × Nat
  | [], m, t => (m, t)
  | d :: ds, m, t =>
    let n := torusStep c l d
    let g := torusStep c n d
    if has occ n && !(has occ g) && !(has twice g) then
      if has m n then pushAll c occ l twice ds (Nat.lor (Nat.xor m (bit n)) (bit g)) t
      else pushAll c occ l twice ds m (Nat.lor (Nat.xor t (bit n)) (bit g))
    else pushAll c occ l twice ds m t

/-- The first column's squares: `Σ_{r<rows} 2^(r*cols) = (2^size - 1) / (2^cols - 1)`. -/
def Cfg.firstCol (c : Cfg) : Nat := c.full / (bit c.cols - 1)

/-- The last column's squares. -/
def Cfg.lastCol (c : Cfg) : Nat := Nat.shiftLeft c.firstCol (c.cols - 1)

/-- `shiftE b` has `(r, k)` set iff `b` has `(r, k+1 mod cols)`. -/
def shiftE (c : Cfg) (b : Nat) : Nat :=
  Nat.lor (Nat.land (Nat.shiftRight b 1) (c.full - c.lastCol))
    (Nat.land (Nat.shiftLeft b (c.cols - 1)) c.lastCol)

/-- `shiftW b` has `(r, k)` set iff `b` has `(r, k-1 mod cols)`. -/
def shiftW (c : Cfg) (b : Nat) : Nat :=
  Nat.lor (Nat.land (Nat.shiftLeft b 1) (c.full - c.firstCol))
    (Nat.land (Nat.shiftRight b (c.cols - 1)) c.firstCol)

/-- `shiftS b` has `(r, k)` set iff `b` has `(r+1 mod rows, k)` (for `b` within the board). -/
def shiftS (c : Cfg) (b : Nat) : Nat :=
  Nat.lor (Nat.shiftRight b c.cols) (Nat.land (Nat.shiftLeft b (c.size - c.cols)) c.full)

/-- Some `S` with `S`, `S+δ`, `S+2δ` all in `b`, where `sh` moves the board by `-δ`. -/
def lineAlong (sh : Nat → Nat) (b : Nat) : Bool :=
  let b1 := sh b
  !(Nat.beq (Nat.land b (Nat.land b1 (sh b1))) 0)

/-- Three in a row on the torus: horizontal, vertical, diagonal `(1,1)`, antidiagonal `(1,-1)`. -/
def hasLine (c : Cfg) (b0 : Nat) : Bool :=
  let b := Nat.land b0 c.full
  lineAlong (shiftE c) b || lineAlong (shiftS c) b ||
    lineAlong (fun v => shiftS c (shiftE c v)) b || lineAlong (fun v => shiftS c (shiftW c v)) b

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
def Pos.handOver (s : Pos) (mine theirs bin : Nat) : Pos :=
  match s.turn with
  | .x => { x := mine, o := theirs, xbin := bin, obin := s.obin, turn := .o }
  | .o => { x := theirs, o := mine, xbin := s.xbin, obin := bin, turn := .x }

/-- Does the list have an element? -/
def nonEmpty : List Nat → Bool
  | [] => false
  | _ :: _ => true

/-- After a turn that did not end the game: the opponent moves; if stuck, the mover moves
again (a pass, not a ply); if both are stuck, a draw. -/
def settle (c : Cfg) (h : Pos) (mover : Side) : Outcome :=
  if nonEmpty (legal c h) then ⟨h, none⟩
  else if nonEmpty (legal c { h with turn := mover }) then ⟨{ h with turn := mover }, none⟩
  else ⟨h, some .draw⟩

/-- One turn: action `a` (a code of `legal c s`) in `s`. Land, pop, lines, results, stuck. -/
def step (c : Cfg) (s : Pos) (a : Nat) : Outcome :=
  let dst := a % c.size
  let src1 := a / c.size
  let placing := Nat.beq src1 0
  let m0 := if placing then s.mine else Nat.xor s.mine (bit (src1 - 1))
  let m1 := Nat.lor m0 (bit dst)
  let bin := if placing then s.bin - 1 else s.bin
  let occ := Nat.lor m1 s.theirs
  let twice := sharedTargets c occ dst dirs 0 0
  let pushed := pushAll c occ dst twice dirs m1 s.theirs
  let lm := hasLine c pushed.1
  let lt := hasLine c pushed.2
  let h := s.handOver pushed.1 pushed.2 bin
  if lm && lt then ⟨h, some .draw⟩
  else if lm then ⟨h, some (.win s.turn)⟩
  else if lt then ⟨h, some (.win s.turn.other)⟩
  else settle c h s.turn

/-- A node of the game graph: a live position, or a game over with its result. -/
inductive Node where
  | live (s : Pos)
  | over (r : Result)

/-- The node an outcome leads to. -/
def Outcome.node (o : Outcome) : Node :=
  match o.result with
  | some r => .over r
  | none => .live o.next

/-- RULES.md's force-win predicate, the least one closed under these rules: the game has just
ended with `p` winning; or `p` is to move and some legal action leads to a force-win node; or
the opponent is to move, has a legal action, and every legal action leads to one. A pass is
already folded into `step`. Being inductive, it only admits finite wins. -/
inductive ForceWin (c : Cfg) (p : Side) : Node → Prop where
  | won : ForceWin c p (.over (.win p))
  | choose (s : Pos) (a : Nat) :
      s.turn = p → a ∈ legal c s → ForceWin c p (step c s a).node → ForceWin c p (.live s)
  | every (s : Pos) :
      s.turn = p.other → legal c s ≠ [] →
      (∀ a, a ∈ legal c s → ForceWin c p (step c s a).node) → ForceWin c p (.live s)

end Pop
