import Pop.Check

/-!
# The checker of non-win sets

A non-win set for `p` is a set `S` of positions, closed under play: where `p` is to move, every
legal action ends the game without `p` winning or hands over a position of `S`; where the
opponent is to move, one named action does. It is stored as a list of search trees (the shards)
of entries `(key, action, 0)`: `key` encodes a position (`encode`), `action` is the defender's
action code (ignored where `p` is to move). Membership is a lookup in every tree, accepted only
when the stored key decodes to exactly the position looked for, so soundness (`Pop.NonWinSound`)
never relies on the trees being sorted or on `encode` being injective.
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

/-- Is `s` an entry of one of the trees? -/
def inTrees (c : Geo) (s : Pos) : List Tree → Bool
  | [] => false
  | t :: ts => foundAt c s (t.find (encode c s)) || inTrees c s ts

/-- The shard checker: the closure condition at every entry of `t`. -/
def checkSet (c : Geo) (p : Side) (mem : Pos → Bool) (t : Tree) : Bool :=
  t.all (fun k a _ => closedAt c p mem (decode c k) a)

/-- Every tree of a list passed `checkSet`; the rendered main module builds it from the shard
theorems, one `cons` per shard. -/
inductive AllChecked (c : Geo) (p : Side) (mem : Pos → Bool) : List Tree → Prop where
  | nil : AllChecked c p mem []
  | cons (t : Tree) (ts : List Tree) :
      checkSet c p mem t = true → AllChecked c p mem ts → AllChecked c p mem (t :: ts)

end Pop
