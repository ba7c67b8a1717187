import Pop.Check

/-!
# The checker of non-win sets

A non-win set for `p` is a set `S` of positions, closed under play: where `p` is to move, every
legal action ends the game without `p` winning or hands over a position of `S`; where the opponent
is to move, one named action does. It is stored as search trees (the pieces) of entries `(key,
action, 0)`: `key` encodes a position (`encode`), `action` is the defender's action code (ignored
where `p` is to move). The pieces are the leaves of a `PieceIndex`, a balanced tree split by keys: a
lookup of `s` walks the index to the one piece whose key range holds `encode g s` and searches that
piece only, so a check costs the same whatever the number of pieces. A hit is accepted only when the
stored key decodes to exactly the position looked for, so soundness (`Pop.NonWinSound`) never relies
on the index or the trees being sorted, nor on `encode` being injective: a wrong split key can only
make a lookup miss.
-/

namespace Pop

/-- A turn's outcome keeps `p` from winning: the game ended without `p` winning, or it goes on
and `mem` accepts the position handed over. -/
def okOut (p : Side) (mem : Pos → Bool) (o : Outcome) : Bool :=
  match o.result with
  | some r => !(resultWins r p)
  | none => mem o.next

/-- The closure condition at `s`: with `p` to move, `p` has an action and every action is kept
from winning; with the defender to move, the defender's action `a` is legal and kept. -/
def closedAt (c : Geo) (p : Side) (mem : Pos → Bool) (s : Pos) (a : Nat) : Bool :=
  cond (Side.beq s.turn p)
    (nonEmptyAll (fun b => okOut p mem (step c s b)) (legal c s))
    (memB a (legal c s) && okOut p mem (step c s a))

/-- The pieces of a set: `split k lo hi` sends keys below `k` to `lo`, the others to `hi`. -/
inductive PieceIndex where
  | piece (t : Tree)
  | split (k : Nat) (lo hi : PieceIndex)

/-- The piece a key is routed to. -/
def PieceIndex.pick (key : Nat) : PieceIndex → Tree
  | .piece t => t
  | .split k lo hi => cond (Nat.blt key k) (lo.pick key) (hi.pick key)

/-- Is `s` an entry of the piece its key is routed to? -/
def inIndex (g : Geo) (s : Pos) (ix : PieceIndex) : Bool :=
  foundAt g s ((ix.pick (encode g s)).find (encode g s))

/-- The shard checker: the closure condition at every entry of `t`. -/
def checkSet (g : Geo) (p : Side) (mem : Pos → Bool) (t : Tree) : Bool :=
  t.all (fun k a _ => closedAt g p mem (decode g k) a)

/-- Every piece of an index passed `checkSet`; the rendered main module builds it from the
piece theorems along the index (as deep as the index, not as long as the list of pieces). -/
inductive IndexChecked (g : Geo) (p : Side) (mem : Pos → Bool) : PieceIndex → Prop where
  | piece {t : Tree} : checkSet g p mem t = true → IndexChecked g p mem (.piece t)
  | split {k : Nat} {lo hi : PieceIndex} :
      IndexChecked g p mem lo → IndexChecked g p mem hi → IndexChecked g p mem (.split k lo hi)

end Pop
