import Pop.Sound

/-!
# Checking the transition corpus against the model

A record of the shared transition corpus (research movement, any edge, no repetition draw)
as `Nat` data:
the position's key, its legal actions (sorted codes), the action, the next position's key, the
result (`0` none, `1` x wins, `2` o wins, `3` draw) and the indices of the rule branches the
reference engine says it exercised. `chunksOk` recomputes each record with the model;
`guardLine` counts records per branch for the `GUARD_HITS` line.
-/

namespace Pop

/-- One transition of the corpus. -/
structure Rec where
  pos : Nat
  acts : List Nat
  act : Nat
  next : Nat
  result : Nat
  branches : List Nat

/-- `0` none, `1` x wins, `2` o wins, `3` draw. -/
def resultCode : Option Result → Nat
  | none => 0
  | some (.win .x) => 1
  | some (.win .o) => 2
  | some .draw => 3

/-- Element-wise equality of code lists (`legal` lists codes in increasing order). -/
def listBeq : List Nat → List Nat → Bool
  | [], [] => true
  | a :: as, b :: bs => Nat.beq a b && listBeq as bs
  | _, _ => false

/-- The model agrees with one record. -/
def recOk (g : Geo) (r : Rec) : Bool :=
  listBeq (legal g (decode g r.pos)) r.acts &&
    Pos.beq (step g (decode g r.pos) r.act).next (decode g r.next) &&
    Nat.beq (resultCode (step g (decode g r.pos) r.act).result) r.result

/-- The model agrees with every record of a list. -/
def recsOk (g : Geo) : List Rec → Bool
  | [] => true
  | r :: rs => recOk g r && recsOk g rs

/-- The model agrees with every record of every chunk. -/
def chunksOk : List (Geo × List Rec) → Bool
  | [] => true
  | e :: es => recsOk e.1 e.2 && chunksOk es

theorem chunksOk_nil : chunksOk [] = true := rfl

/-- `chunksOk` from its parts, so that every chunk is its own kernel-checked declaration. -/
theorem chunksOk_cons {g : Geo} {rs : List Rec} {es : List (Geo × List Rec)}
    (h : recsOk g rs = true) (hs : chunksOk es = true) : chunksOk ((g, rs) :: es) = true := by
  have h' : (recsOk g rs && chunksOk es) = true := band_intro h hs
  exact h'

/-- How many records exercise branch `b`. -/
def branchHits (b : Nat) (chunks : List (Geo × List Rec)) : Nat :=
  chunks.foldl (fun acc e => e.2.foldl (fun n r => if memB b r.branches then n + 1 else n) acc) 0

/-- `GUARD_HITS name=count,…` for the branches with at least one record, in list order. -/
def guardLine (names : List String) (chunks : List (Geo × List Rec)) : String :=
  let counts := (List.range names.length).zip names |>.filterMap fun (i, name) =>
    let n := branchHits i chunks
    if n == 0 then none else some s!"{name}={n}"
  "GUARD_HITS " ++ String.intercalate "," counts

end Pop
