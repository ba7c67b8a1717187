import Pop.Rules

/-!
# The certificate checker

A certificate shard is a binary search tree of entries `(key, action, rank)`: `key` encodes a
position where the winner `p` is to move (`encode`), `action` is the winning action's code, and
`rank` strictly decreases along every play. The renderer emits the tree as a literal; it is
balanced, so the kernel finds a key in `log₂ n` comparisons by structural recursion.

`checkShard c p lower t` recomputes, for every entry, the position after the winning action,
every reply of the opponent (and every pass), every result, and requires each non-terminal
position after a reply with `p` to move to be an entry of `t` with smaller rank, or answered
`true` by `lower` (the shards already proved). Soundness (`Pop.Sound`) never relies on the tree
being sorted or on `encode` being injective: a lookup hit is accepted only after the stored key
decodes to exactly the position looked for.
-/

namespace Pop

/-- Boolean membership of a code in a list. -/
def memB (a : Nat) : List Nat → Bool
  | [] => false
  | b :: l => Nat.beq a b || memB a l

/-- Boolean "every element satisfies `f`". -/
def allB (f : Nat → Bool) : List Nat → Bool
  | [] => true
  | b :: l => f b && allB f l

/-- Boolean "the list is not empty and every element satisfies `f`". -/
def nonEmptyAll (f : Nat → Bool) : List Nat → Bool
  | [] => false
  | b :: l => allB f (b :: l)

/-- `0` for `x`, `1` for `o`. -/
def Side.code : Side → Nat
  | .x => 0
  | .o => 1

/-- A position as one `Nat`: bits `[0, n)` hold `x`, `[n, 2n)` hold `o`, then 5 bits of `x`'s
bin, 5 bits of `o`'s bin, and the side to move (`n = rows * cols`). -/
def encode (c : Cfg) (s : Pos) : Nat :=
  s.x + bit c.size * (s.o + bit c.size * (s.xbin + 32 * (s.obin + 32 * s.turn.code)))

/-- Inverse of `encode` on positions within range. -/
def decode (c : Cfg) (k : Nat) : Pos :=
  { x := k % bit c.size
    o := Nat.shiftRight k c.size % bit c.size
    xbin := Nat.shiftRight k (2 * c.size) % 32
    obin := Nat.shiftRight k (2 * c.size + 5) % 32
    turn := if Nat.beq (Nat.shiftRight k (2 * c.size + 10)) 0 then .x else .o }

/-- Boolean equality of positions, field by field. -/
def Pos.beq (a b : Pos) : Bool :=
  Nat.beq a.x b.x && Nat.beq a.o b.o && Nat.beq a.xbin b.xbin && Nat.beq a.obin b.obin &&
    Side.beq a.turn b.turn

/-- A certificate shard: a binary search tree on `key`. -/
inductive Tree where
  | leaf
  | node (l : Tree) (key act rank : Nat) (r : Tree)

/-- The entry found by a lookup. -/
structure Found where
  key : Nat
  act : Nat
  rank : Nat

/-- Binary search by key. -/
def Tree.find (k : Nat) : Tree → Option Found
  | .leaf => none
  | .node l k' a n r =>
    if Nat.blt k k' then l.find k
    else if Nat.blt k' k then r.find k
    else some ⟨k', a, n⟩

/-- Does `f` hold at every entry of the tree? -/
def Tree.all (f : Nat → Nat → Nat → Bool) : Tree → Bool
  | .leaf => true
  | .node l k a n r => f k a n && l.all f && r.all f

/-- Does a result mean `p` won? -/
def resultWins : Result → Side → Bool
  | .win q, p => Side.beq q p
  | .draw, _ => false

/-- An outcome is good for `p`: `p` has won, or the game goes on and `k` accepts the position. -/
def outcomeOk (p : Side) (o : Outcome) (k : Pos → Bool) : Bool :=
  match o.result with
  | some r => resultWins r p
  | none => k o.next

/-- A live position `s` after a turn is won for `p`: with `p` to move, `proved s`; with the
opponent to move, the opponent has a legal action and every one is good for `p` (a pass that
hands the turn back to the opponent is followed, up to `fuel` times). -/
def nodeOk (c : Cfg) (p : Side) (proved : Pos → Bool) : Nat → Pos → Bool
  | 0, _ => false
  | fuel + 1, s =>
    cond (Side.beq s.turn p) (proved s)
      (nonEmptyAll (fun b => outcomeOk p (step c s b) (fun s' => nodeOk c p proved fuel s'))
        (legal c s))

/-- Fuel for runs of opponent turns while `p` is stuck: far more than any certificate needs. -/
def fuelOf (c : Cfg) : Nat := c.size + 2

/-- An entry's check: `p` to move in the decoded position, the action legal, and its outcome
good for `p` given `proved` for positions with `p` to move. -/
def entryOk (c : Cfg) (p : Side) (proved : Pos → Bool) (k a : Nat) : Bool :=
  Side.beq (decode c k).turn p && memB a (legal c (decode c k)) &&
    outcomeOk p (step c (decode c k) a) (fun s => nodeOk c p proved (fuelOf c) s)

/-- A lookup result in this shard counts if its rank is below `n` and its key decodes to `s`. -/
def foundBelow (c : Cfg) (n : Nat) (s : Pos) : Option Found → Bool
  | some f => Nat.ble (f.rank + 1) n && Pos.beq (decode c f.key) s
  | none => false

/-- Positions proved for an entry of rank `n`: entries of this shard with smaller rank, or
positions the lower shards answer for. -/
def knownBelow (c : Cfg) (t : Tree) (lower : Pos → Bool) (n : Nat) (s : Pos) : Bool :=
  foundBelow c n s (t.find (encode c s)) || lower s

/-- The shard checker. -/
def checkShard (c : Cfg) (p : Side) (lower : Pos → Bool) (t : Tree) : Bool :=
  t.all (fun k a n => entryOk c p (knownBelow c t lower n) k a)

/-- A lookup result counts for a lower shard if its key decodes to `s`. -/
def foundAt (c : Cfg) (s : Pos) : Option Found → Bool
  | some f => Pos.beq (decode c f.key) s
  | none => false

/-- `t.Has k a n`: the tree holds the entry `(k, a, n)` somewhere. -/
inductive Tree.Has : Tree → Nat → Nat → Nat → Prop where
  | here (l r : Tree) (k a n : Nat) : Tree.Has (.node l k a n r) k a n
  | left (l r : Tree) (k a n k' a' n' : Nat) :
      Tree.Has l k a n → Tree.Has (.node l k' a' n' r) k a n
  | right (l r : Tree) (k a n k' a' n' : Nat) :
      Tree.Has r k a n → Tree.Has (.node l k' a' n' r) k a n

/-- What a shard theorem states: every entry's position has `ForceWin`. -/
def TreeProved (c : Cfg) (p : Side) (t : Tree) : Prop :=
  ∀ k a n, t.Has k a n → ForceWin c p (.live (decode c k))

/-- A proved shard: its tree together with its theorem, so lookups carry their proofs. -/
structure Proved (c : Cfg) (p : Side) where
  tree : Tree
  sound : TreeProved c p tree

/-- Is `s` (with key `key`) an entry of one of these proved shards? -/
def findIn (c : Cfg) {p : Side} (s : Pos) (key : Nat) : List (Proved c p) → Bool
  | [] => false
  | t :: ts => foundAt c s (t.tree.find key) || findIn c s key ts

/-- The lookup of the lower shards: groups of proved shards by placement rank (checkers left in
both bins), so a lookup searches only the shards of the position's own placement rank. -/
def lookupTable (c : Cfg) {p : Side} : List (Nat × List (Proved c p)) → Pos → Bool
  | [], _ => false
  | g :: gs, s =>
    (Nat.beq g.1 (s.xbin + s.obin) && findIn c s (encode c s) g.2) || lookupTable c gs s

end Pop
