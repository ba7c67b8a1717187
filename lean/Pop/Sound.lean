import Pop.Check

/-!
# Soundness of the checker

`checkShard_sound`: if `checkShard g p lower t = true` and every position `lower` answers `true`
for has `ForceWin g p`, then every entry of `t` has `ForceWin g p` (induction on rank).
`lookupTable_sound` turns imported shard theorems into such a `lower`; `nodeOk_sound` gives the
final theorem about the initial position from the top lookup.

The proofs use only small steps (`cases`, `induction`, `subst`, definitional unfolding checked
by `have … := h`) so that they do not depend on how `simp` sets evolve between releases.
-/

namespace Pop

/-! ## Booleans -/

theorem band_left {x y : Bool} (h : (x && y) = true) : x = true := by
  cases x with
  | true => rfl
  | false => simp at h

theorem band_right {x y : Bool} (h : (x && y) = true) : y = true := by
  cases x with
  | true => exact h
  | false => simp at h

theorem bor_cases {x y : Bool} (h : (x || y) = true) : x = true ∨ y = true := by
  cases x with
  | true => exact Or.inl rfl
  | false => exact Or.inr h

theorem cond_true_of {b x y : Bool} (h : cond b x y = true) (hb : b = true) : x = true := by
  subst hb
  exact h

theorem cond_false_of {b x y : Bool} (h : cond b x y = true) (hb : b = false) : y = true := by
  subst hb
  exact h

theorem cond_branch_true {α : Type} {b : Bool} {x y z : α} (h : cond b x y = z)
    (hb : b = true) : x = z := by
  subst hb
  exact h

theorem cond_branch_false {α : Type} {b : Bool} {x y z : α} (h : cond b x y = z)
    (hb : b = false) : y = z := by
  subst hb
  exact h

theorem band_intro {x y : Bool} (hx : x = true) (hy : y = true) : (x && y) = true := by
  subst hx
  subst hy
  rfl

theorem and3_true {x y z : Bool} (hx : x = true) (hy : y = true) (hz : z = true) :
    (x && y && z) = true := by
  subst hx
  subst hy
  subst hz
  rfl

/-! ## Sides and positions -/

theorem Side.eq_of_beq {a b : Side} (h : Side.beq a b = true) : a = b := by
  cases a <;> cases b <;> first | rfl | (simp [Side.beq] at h)

theorem Side.other_of_beq_false {a p : Side} (h : Side.beq a p = false) : a = p.other := by
  cases a <;> cases p <;> first | rfl | (simp [Side.beq] at h)

theorem Pos.eq_of_beq {a b : Pos} (h : Pos.beq a b = true) : a = b := by
  obtain ⟨x1, o1, xb1, ob1, t1⟩ := a
  obtain ⟨x2, o2, xb2, ob2, t2⟩ := b
  have h' : (Nat.beq x1 x2 && Nat.beq o1 o2 && Nat.beq xb1 xb2 && Nat.beq ob1 ob2 &&
      Side.beq t1 t2) = true := h
  have e5 : t1 = t2 := Side.eq_of_beq (band_right h')
  have e4 : ob1 = ob2 := Nat.eq_of_beq_eq_true (band_right (band_left h'))
  have e3 : xb1 = xb2 := Nat.eq_of_beq_eq_true (band_right (band_left (band_left h')))
  have e2 : o1 = o2 := Nat.eq_of_beq_eq_true (band_right (band_left (band_left (band_left h'))))
  have e1 : x1 = x2 := Nat.eq_of_beq_eq_true (band_left (band_left (band_left (band_left h'))))
  subst e1 e2 e3 e4 e5
  rfl

/-! ## Lists -/

theorem memB_sound {a : Nat} : ∀ {l : List Nat}, memB a l = true → a ∈ l
  | [], h => by
    have h' : false = true := h
    nomatch h'
  | b :: l, h => by
    have h' : (Nat.beq a b || memB a l) = true := h
    rcases bor_cases h' with hb | hm
    · have e : a = b := Nat.eq_of_beq_eq_true hb
      subst e
      exact List.Mem.head l
    · exact List.Mem.tail b (memB_sound hm)

theorem allB_sound {f : Nat → Bool} : ∀ {l : List Nat}, allB f l = true → ∀ a, a ∈ l → f a = true
  | [], _, _, ha => by cases ha
  | b :: l, h, a, ha => by
    have h' : (f b && allB f l) = true := h
    cases ha with
    | head => exact band_left h'
    | tail _ hm => exact allB_sound (band_right h') a hm

theorem nonEmptyAll_sound {f : Nat → Bool} :
    ∀ {l : List Nat}, nonEmptyAll f l = true → l ≠ [] ∧ ∀ a, a ∈ l → f a = true
  | [], h => by
    have h' : false = true := h
    nomatch h'
  | b :: l, h => by
    have h' : allB f (b :: l) = true := h
    exact ⟨fun e => nomatch e, allB_sound h'⟩

/-! ## Trees -/

theorem Tree.has_of_find (k : Nat) (t : Tree) :
    ∀ f : Found, t.find k = some f → t.Has f.key f.act f.rank := by
  induction t with
  | leaf =>
    intro f h
    have h' : (none : Option Found) = some f := h
    nomatch h'
  | node l k' a n r ihl ihr =>
    intro f h
    have h1 : cond (Nat.ble k' k) (cond (Nat.beq k k') (some ⟨k', a, n⟩) (r.find k))
        (l.find k) = some f := h
    cases hb : Nat.ble k' k with
    | false => exact Tree.Has.left l r _ _ _ k' a n (ihl f (cond_branch_false h1 hb))
    | true =>
      have h2 := cond_branch_true h1 hb
      cases he : Nat.beq k k' with
      | false => exact Tree.Has.right l r _ _ _ k' a n (ihr f (cond_branch_false h2 he))
      | true =>
        have h3 : some (Found.mk k' a n) = some f := cond_branch_true h2 he
        cases h3
        exact Tree.Has.here l r k' a n

theorem Tree.all_of_has (f : Nat → Nat → Nat → Bool) {t : Tree} {k a n : Nat}
    (hh : t.Has k a n) : t.all f = true → f k a n = true := by
  induction hh with
  | here l r k a n =>
    intro h
    have h' : (f k a n && l.all f && r.all f) = true := h
    exact band_left (band_left h')
  | left l r k a n k' a' n' _ ih =>
    intro h
    have h' : (f k' a' n' && l.all f && r.all f) = true := h
    exact ih (band_right (band_left h'))
  | right l r k a n k' a' n' _ ih =>
    intro h
    have h' : (f k' a' n' && l.all f && r.all f) = true := h
    exact ih (band_right h')

/-- A tree's check from its parts: what lets a shard be checked by several declarations. -/
theorem Tree.all_node_of {f : Nat → Nat → Nat → Bool} {l r : Tree} {k a n : Nat}
    (hl : l.all f = true) (hx : f k a n = true) (hr : r.all f = true) :
    (Tree.node l k a n r).all f = true := by
  have h : (f k a n && l.all f && r.all f) = true := and3_true hx hl hr
  exact h

theorem Tree.all_leaf (f : Nat → Nat → Nat → Bool) : Tree.all f Tree.leaf = true := rfl

/-! ## One turn, its replies, one entry -/

theorem outcomeOk_sound {g : Geo} {p : Side} {k : Pos → Bool}
    (hk : ∀ s, k s = true → ForceWin g p (.live s)) :
    ∀ o : Outcome, outcomeOk p o k = true → ForceWin g p o.node
  | ⟨next, none⟩, h => hk next h
  | ⟨_, some (.win q)⟩, h => by
    have h' : Side.beq q p = true := h
    have hq : q = p := Side.eq_of_beq h'
    subst hq
    exact ForceWin.won
  | ⟨_, some .draw⟩, h => by
    have h' : false = true := h
    nomatch h'

theorem nodeOk_sound {g : Geo} {p : Side} {proved : Pos → Bool}
    (hp : ∀ s, proved s = true → ForceWin g p (.live s)) :
    ∀ (fuel : Nat) (s : Pos), nodeOk g p proved fuel s = true → ForceWin g p (.live s) := by
  intro fuel
  induction fuel with
  | zero =>
    intro s h
    have h' : false = true := h
    nomatch h'
  | succ fuel ih =>
    intro s h
    have h1 : cond (Side.beq s.turn p) (proved s)
        (nonEmptyAll (fun b => outcomeOk p (step g s b) (fun s' => nodeOk g p proved fuel s'))
          (legal g s)) = true := h
    cases hb : Side.beq s.turn p with
    | true => exact hp s (cond_true_of h1 hb)
    | false =>
      have h2 := cond_false_of h1 hb
      obtain ⟨hne, hall⟩ := nonEmptyAll_sound h2
      exact ForceWin.every s (Side.other_of_beq_false hb) hne
        (fun a ha => outcomeOk_sound ih (step g s a) (hall a ha))

theorem entryOk_sound {g : Geo} {p : Side} {proved : Pos → Bool}
    (hp : ∀ s, proved s = true → ForceWin g p (.live s)) {k a : Nat}
    (h : entryOk g p proved k a = true) : ForceWin g p (.live (decode g k)) := by
  have h' : (Side.beq (decode g k).turn p && memB a (legal g (decode g k)) &&
      outcomeOk p (step g (decode g k) a) (fun s => nodeOk g p proved (fuelOf g) s)) = true := h
  have h1 : Side.beq (decode g k).turn p = true := band_left (band_left h')
  have h2 : memB a (legal g (decode g k)) = true := band_right (band_left h')
  have h3 := band_right h'
  exact ForceWin.choose (decode g k) a (Side.eq_of_beq h1) (memB_sound h2)
    (outcomeOk_sound (nodeOk_sound hp (fuelOf g)) (step g (decode g k) a) h3)

/-! ## Lookups -/

theorem foundBelow_sound {g : Geo} {p : Side} {t : Tree} {n : Nat} {s : Pos}
    (ih : ∀ k a m, m < n → t.Has k a m → ForceWin g p (.live (decode g k))) :
    ∀ o : Option Found, t.find (encode g s) = o → foundBelow g n s o = true →
      ForceWin g p (.live s)
  | none, _, h => by
    have h' : false = true := h
    nomatch h'
  | some f, hf, h => by
    have h' : (Nat.ble (f.rank + 1) n && Pos.beq (decode g f.key) s) = true := h
    have hle : f.rank + 1 ≤ n := Nat.le_of_ble_eq_true (band_left h')
    have he : decode g f.key = s := Pos.eq_of_beq (band_right h')
    have hh : t.Has f.key f.act f.rank := Tree.has_of_find (encode g s) t f hf
    subst he
    exact ih f.key f.act f.rank (by omega) hh

theorem knownBelow_sound {g : Geo} {p : Side} {t : Tree} {lower : Pos → Bool} {pr n : Nat}
    (ih : ∀ k a m, m < n → t.Has k a m → ForceWin g p (.live (decode g k)))
    (hl : ∀ s, lower s = true → ForceWin g p (.live s)) :
    ∀ s, knownBelow g t lower pr n s = true → ForceWin g p (.live s) := by
  intro s h
  have h' : (lower s || (Nat.beq s.placement pr && foundBelow g n s (t.find (encode g s)))) =
      true := h
  rcases bor_cases h' with h1 | h2
  · exact hl s h1
  · exact foundBelow_sound (s := s) ih (t.find (encode g s)) rfl (band_right h2)

theorem foundAt_sound {g : Geo} {p : Side} {s : Pos} (t : Proved g p) :
    ∀ (key : Nat) (o : Option Found), t.tree.find key = o → foundAt g s o = true →
      ForceWin g p (.live s)
  | _, none, _, h => by
    have h' : false = true := h
    nomatch h'
  | key, some f, hf, h => by
    have h' : Pos.beq (decode g f.key) s = true := h
    have he : decode g f.key = s := Pos.eq_of_beq h'
    have hh : t.tree.Has f.key f.act f.rank := Tree.has_of_find key t.tree f hf
    subst he
    exact t.sound f.key f.act f.rank hh

theorem findIn_sound (g : Geo) {p : Side} (s : Pos) (key : Nat) :
    ∀ ts : List (Proved g p), findIn g s key ts = true → ForceWin g p (.live s)
  | [], h => by
    have h' : false = true := h
    nomatch h'
  | t :: ts, h => by
    have h' : (foundAt g s (t.tree.find key) || findIn g s key ts) = true := h
    rcases bor_cases h' with h1 | h2
    · exact foundAt_sound t key _ rfl h1
    · exact findIn_sound g s key ts h2

/-- Every position the lower-shard lookup accepts has `ForceWin`. -/
theorem lookupTable_sound (g : Geo) {p : Side} :
    ∀ (gs : List (Nat × List (Proved g p))) (s : Pos), lookupTable g gs s = true →
      ForceWin g p (.live s)
  | [], _, h => by
    have h' : false = true := h
    nomatch h'
  | e :: es, s, h => by
    have h' : ((Nat.beq e.1 s.placement && findIn g s (encode g s) e.2) ||
        lookupTable g es s) = true := h
    rcases bor_cases h' with h1 | h2
    · exact findIn_sound g s (encode g s) e.2 (band_right h1)
    · exact lookupTable_sound g es s h2

/-! ## The shard theorem -/

/-- Compositional soundness: an accepted shard, over a sound lookup, proves all its entries. -/
theorem checkShard_sound (g : Geo) (p : Side) (lower : Pos → Bool) (pr : Nat) (t : Tree)
    (hc : checkShard g p lower pr t = true)
    (hl : ∀ s, lower s = true → ForceWin g p (.live s)) : TreeProved g p t := by
  have main : ∀ m k a n : Nat, n < m → t.Has k a n → ForceWin g p (.live (decode g k)) := by
    intro m
    induction m with
    | zero =>
      intro k a n hn _
      exact absurd hn (by omega)
    | succ m ih =>
      intro k a n hn hh
      have he : shardEntryOk g p lower pr t k a n = true :=
        Tree.all_of_has (shardEntryOk g p lower pr t) hh hc
      have he' : entryOk g p (knownBelow g t lower pr n) k a = true := he
      exact entryOk_sound
        (knownBelow_sound (fun k' a' m' hm hh' => ih k' a' m' (by omega) hh') hl) he'
  intro k a n hh
  exact main (n + 1) k a n (by omega) hh

/-- The glue to the final theorem: a position accepted by `nodeOk` over the lookup of all
shards has `ForceWin` (with the winner to move it must be an entry; otherwise every reply is
expanded as in a shard). -/
theorem root_sound (g : Geo) (p : Side) (gs : List (Nat × List (Proved g p))) (s : Pos)
    (h : nodeOk g p (lookupTable g gs) (fuelOf g) s = true) : ForceWin g p (.live s) :=
  nodeOk_sound (lookupTable_sound g gs) (fuelOf g) s h

/-- A win in equal games: carries a theorem about a certificate's literal tables over to the
ruleset's game `Geo.of c`, given the kernel-checked equation between the two. -/
theorem ForceWin.of_geo_eq {g g' : Geo} (e : g = g') {p : Side} {n : Node}
    (h : ForceWin g p n) : ForceWin g' p n := by
  subst e
  exact h

/-- Route a proof through `Classical.em`, so that its `#print axioms` list is always exactly
`[propext, Classical.choice, Quot.sound]` whichever tactics the proofs above happen to use.
The pinned list still catches `sorryAx`, `Lean.ofReduceBool` or any other axiom. -/
theorem pinned {P : Prop} (h : P) : P :=
  (Classical.em P).elim (fun hp => hp) (fun _ => h)

/-- The two statements the rendered modules rely on, together, so that this module pins the
axioms of its proofs: any axiom beyond the allowed three would show in the list below. -/
theorem soundness :
    (∀ g p lower pr t, checkShard g p lower pr t = true →
      (∀ s, lower s = true → ForceWin g p (.live s)) → TreeProved g p t) ∧
    (∀ g p (gs : List (Nat × List (Proved g p))) s,
      nodeOk g p (lookupTable g gs) (fuelOf g) s = true → ForceWin g p (.live s)) :=
  pinned ⟨checkShard_sound, root_sound⟩

/-- info: 'Pop.soundness' depends on axioms: [propext, Classical.choice, Quot.sound] -/
#guard_msgs (whitespace := lax) in
#print axioms soundness

end Pop
