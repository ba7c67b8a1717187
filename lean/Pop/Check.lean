import Pop.Rules

/-!
# The certificate checker

A certificate shard is a binary search tree of entries `(key, action, rank)`: `key` encodes a
position where the winner `p` is to move (`encode`), `action` is the winning action's code, and
`rank` strictly decreases along every play. The renderer emits the tree as a literal; it is
balanced, so the kernel finds a key in `log₂ n` comparisons by structural recursion. Everything
runs on a game `g : Geo` (the ruleset's tables, see `Pop.Rules`).

`checkShard g p lower pr t` recomputes, for every entry, the position after the winning action,
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
bin, 5 bits of `o`'s bin, and the side to move (`n = rows * cols`, `span = 2 ^ n`). -/
def encode (g : Geo) (s : Pos) : Nat :=
  Nat.add s.x (Nat.mul g.span (Nat.add s.o (Nat.mul g.span
    (Nat.add s.xbin (Nat.mul 32 (Nat.add s.obin (Nat.mul 32 s.turn.code)))))))

/-- Inverse of `encode` on positions within range. -/
def decode (g : Geo) (k : Nat) : Pos :=
  { x := Nat.mod k g.span
    o := Nat.mod (Nat.shiftRight k g.size) g.span
    xbin := Nat.mod (Nat.shiftRight k (Nat.add g.size g.size)) 32
    obin := Nat.mod (Nat.shiftRight k (Nat.add (Nat.add g.size g.size) 5)) 32
    turn := cond (Nat.beq (Nat.shiftRight k (Nat.add (Nat.add g.size g.size) 10)) 0) .x .o }

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

/-- Binary search by key (`Nat.ble` and `Nat.beq`, which the kernel runs with GMP; `Nat.blt`
would unfold to `Nat.ble (k + 1) k'` through the `+` instance). -/
def Tree.find (k : Nat) : Tree → Option Found
  | .leaf => none
  | .node l k' a n r =>
    cond (Nat.ble k' k) (cond (Nat.beq k k') (some ⟨k', a, n⟩) (r.find k)) (l.find k)

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
def nodeOk (g : Geo) (p : Side) (proved : Pos → Bool) : Nat → Pos → Bool
  | 0, _ => false
  | fuel + 1, s =>
    cond (Side.beq s.turn p) (proved s)
      (nonEmptyAll (fun b => outcomeOk p (step g s b) (fun s' => nodeOk g p proved fuel s'))
        (legal g s))

/-- Fuel for runs of opponent turns while `p` is stuck: far more than any certificate needs. -/
def fuelOf (g : Geo) : Nat := Nat.add g.size 2

/-- An entry's check: `p` to move in the decoded position, the action legal, and its outcome
good for `p` given `proved` for positions with `p` to move. -/
def entryOk (g : Geo) (p : Side) (proved : Pos → Bool) (k a : Nat) : Bool :=
  Side.beq (decode g k).turn p && memB a (legal g (decode g k)) &&
    outcomeOk p (step g (decode g k) a) (fun s => nodeOk g p proved (fuelOf g) s)

/-- A lookup result in this shard counts if its rank is below `n` and its key decodes to `s`. -/
def foundBelow (g : Geo) (n : Nat) (s : Pos) : Option Found → Bool
  | some f => Nat.ble (Nat.add f.rank 1) n && Pos.beq (decode g f.key) s
  | none => false

/-- A position's placement rank: the checkers left in both bins. -/
def Pos.placement (s : Pos) : Nat := Nat.add s.xbin s.obin

/-- Positions proved for an entry of rank `n` in a shard of placement rank `pr`: what the
lower shards answer for (tried first), or, for a position of the shard's own placement rank,
an entry of this shard with smaller rank. -/
def knownBelow (g : Geo) (t : Tree) (lower : Pos → Bool) (pr n : Nat) (s : Pos) : Bool :=
  lower s || (Nat.beq s.placement pr && foundBelow g n s (t.find (encode g s)))

/-- The check of one entry `(k, a, n)` of shard `t` (placement rank `pr`). -/
def shardEntryOk (g : Geo) (p : Side) (lower : Pos → Bool) (pr : Nat) (t : Tree)
    (k a n : Nat) : Bool :=
  entryOk g p (knownBelow g t lower pr n) k a

/-- The shard checker. -/
def checkShard (g : Geo) (p : Side) (lower : Pos → Bool) (pr : Nat) (t : Tree) : Bool :=
  t.all (shardEntryOk g p lower pr t)

/-- A lookup result counts for a lower shard if its key decodes to `s`. -/
def foundAt (g : Geo) (s : Pos) : Option Found → Bool
  | some f => Pos.beq (decode g f.key) s
  | none => false

/-- `t.Has k a n`: the tree holds the entry `(k, a, n)` somewhere. -/
inductive Tree.Has : Tree → Nat → Nat → Nat → Prop where
  | here (l r : Tree) (k a n : Nat) : Tree.Has (.node l k a n r) k a n
  | left (l r : Tree) (k a n k' a' n' : Nat) :
      Tree.Has l k a n → Tree.Has (.node l k' a' n' r) k a n
  | right (l r : Tree) (k a n k' a' n' : Nat) :
      Tree.Has r k a n → Tree.Has (.node l k' a' n' r) k a n

/-- What a shard theorem states: every entry's position has `ForceWin`. -/
def TreeProved (g : Geo) (p : Side) (t : Tree) : Prop :=
  ∀ k a n, t.Has k a n → ForceWin g p (.live (decode g k))

/-- A proved shard: its tree together with its theorem, so lookups carry their proofs. -/
structure Proved (g : Geo) (p : Side) where
  tree : Tree
  sound : TreeProved g p tree

/-- Is `s` (with key `key`) an entry of one of these proved shards? -/
def findIn (g : Geo) {p : Side} (s : Pos) (key : Nat) : List (Proved g p) → Bool
  | [] => false
  | t :: ts => foundAt g s (t.tree.find key) || findIn g s key ts

/-- The lookup of the lower shards: groups of proved shards by placement rank, so a lookup
searches only the shards of the position's own placement rank. -/
def lookupTable (g : Geo) {p : Side} : List (Nat × List (Proved g p)) → Pos → Bool
  | [], _ => false
  | e :: es, s =>
    (Nat.beq e.1 s.placement && findIn g s (encode g s) e.2) || lookupTable g es s

end Pop
