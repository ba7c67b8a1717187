import Pop.Check

/-!
# Soundness of the checker

`checkShard_sound`: if `checkShard c p lower t = true` and every position `lower` answers `true`
for has `ForceWin c p`, then every entry of `t` has `ForceWin c p` (induction on rank).
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
    simp [Tree.find] at h
  | node l k' a n r ihl ihr =>
    intro f h
    simp only [Tree.find] at h
    split at h
    · exact Tree.Has.left l r _ _ _ k' a n (ihl f h)
    · split at h
      · exact Tree.Has.right l r _ _ _ k' a n (ihr f h)
      · cases h
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

/-! ## One turn, its replies, one entry -/

theorem outcomeOk_sound {c : Cfg} {p : Side} {k : Pos → Bool}
    (hk : ∀ s, k s = true → ForceWin c p (.live s)) :
    ∀ o : Outcome, outcomeOk p o k = true → ForceWin c p o.node
  | ⟨next, none⟩, h => hk next h
  | ⟨_, some (.win q)⟩, h => by
    have h' : Side.beq q p = true := h
    have hq : q = p := Side.eq_of_beq h'
    subst hq
    exact ForceWin.won
  | ⟨_, some .draw⟩, h => by
    have h' : false = true := h
    nomatch h'

theorem nodeOk_sound {c : Cfg} {p : Side} {proved : Pos → Bool}
    (hp : ∀ s, proved s = true → ForceWin c p (.live s)) :
    ∀ (fuel : Nat) (s : Pos), nodeOk c p proved fuel s = true → ForceWin c p (.live s) := by
  intro fuel
  induction fuel with
  | zero =>
    intro s h
    have h' : false = true := h
    nomatch h'
  | succ fuel ih =>
    intro s h
    have h1 : cond (Side.beq s.turn p) (proved s)
        (nonEmptyAll (fun b => outcomeOk p (step c s b) (fun s' => nodeOk c p proved fuel s'))
          (legal c s)) = true := h
    cases hb : Side.beq s.turn p with
    | true => exact hp s (cond_true_of h1 hb)
    | false =>
      have h2 := cond_false_of h1 hb
      obtain ⟨hne, hall⟩ := nonEmptyAll_sound h2
      exact ForceWin.every s (Side.other_of_beq_false hb) hne
        (fun a ha => outcomeOk_sound ih (step c s a) (hall a ha))

theorem entryOk_sound {c : Cfg} {p : Side} {proved : Pos → Bool}
    (hp : ∀ s, proved s = true → ForceWin c p (.live s)) {k a : Nat}
    (h : entryOk c p proved k a = true) : ForceWin c p (.live (decode c k)) := by
  have h' : (Side.beq (decode c k).turn p && memB a (legal c (decode c k)) &&
      outcomeOk p (step c (decode c k) a) (fun s => nodeOk c p proved (fuelOf c) s)) = true := h
  have h1 : Side.beq (decode c k).turn p = true := band_left (band_left h')
  have h2 : memB a (legal c (decode c k)) = true := band_right (band_left h')
  have h3 := band_right h'
  exact ForceWin.choose (decode c k) a (Side.eq_of_beq h1) (memB_sound h2)
    (outcomeOk_sound (nodeOk_sound hp (fuelOf c)) (step c (decode c k) a) h3)

/-! ## Lookups -/

theorem foundBelow_sound {c : Cfg} {p : Side} {t : Tree} {n : Nat} {s : Pos}
    (ih : ∀ k a m, m < n → t.Has k a m → ForceWin c p (.live (decode c k))) :
    ∀ o : Option Found, t.find (encode c s) = o → foundBelow c n s o = true →
      ForceWin c p (.live s)
  | none, _, h => by
    have h' : false = true := h
    nomatch h'
  | some f, hf, h => by
    have h' : (Nat.ble (f.rank + 1) n && Pos.beq (decode c f.key) s) = true := h
    have hle : f.rank + 1 ≤ n := Nat.le_of_ble_eq_true (band_left h')
    have he : decode c f.key = s := Pos.eq_of_beq (band_right h')
    have hh : t.Has f.key f.act f.rank := Tree.has_of_find (encode c s) t f hf
    subst he
    exact ih f.key f.act f.rank (by omega) hh

theorem knownBelow_sound {c : Cfg} {p : Side} {t : Tree} {lower : Pos → Bool} {n : Nat}
    (ih : ∀ k a m, m < n → t.Has k a m → ForceWin c p (.live (decode c k)))
    (hl : ∀ s, lower s = true → ForceWin c p (.live s)) :
    ∀ s, knownBelow c t lower n s = true → ForceWin c p (.live s) := by
  intro s h
  have h' : (foundBelow c n s (t.find (encode c s)) || lower s) = true := h
  rcases bor_cases h' with h1 | h2
  · exact foundBelow_sound (s := s) ih (t.find (encode c s)) rfl h1
  · exact hl s h2

theorem foundAt_sound {c : Cfg} {p : Side} {s : Pos} (t : Proved c p) :
    ∀ (key : Nat) (o : Option Found), t.tree.find key = o → foundAt c s o = true →
      ForceWin c p (.live s)
  | _, none, _, h => by
    have h' : false = true := h
    nomatch h'
  | key, some f, hf, h => by
    have h' : Pos.beq (decode c f.key) s = true := h
    have he : decode c f.key = s := Pos.eq_of_beq h'
    have hh : t.tree.Has f.key f.act f.rank := Tree.has_of_find key t.tree f hf
    subst he
    exact t.sound f.key f.act f.rank hh

theorem findIn_sound (c : Cfg) {p : Side} (s : Pos) (key : Nat) :
    ∀ ts : List (Proved c p), findIn c s key ts = true → ForceWin c p (.live s)
  | [], h => by
    have h' : false = true := h
    nomatch h'
  | t :: ts, h => by
    have h' : (foundAt c s (t.tree.find key) || findIn c s key ts) = true := h
    rcases bor_cases h' with h1 | h2
    · exact foundAt_sound t key _ rfl h1
    · exact findIn_sound c s key ts h2

/-- Every position the lower-shard lookup accepts has `ForceWin`. -/
theorem lookupTable_sound (c : Cfg) {p : Side} :
    ∀ (gs : List (Nat × List (Proved c p))) (s : Pos), lookupTable c gs s = true →
      ForceWin c p (.live s)
  | [], _, h => by
    have h' : false = true := h
    nomatch h'
  | g :: gs, s, h => by
    have h' : ((Nat.beq g.1 (s.xbin + s.obin) && findIn c s (encode c s) g.2) ||
        lookupTable c gs s) = true := h
    rcases bor_cases h' with h1 | h2
    · exact findIn_sound c s (encode c s) g.2 (band_right h1)
    · exact lookupTable_sound c gs s h2

/-! ## The shard theorem -/

/-- Compositional soundness: an accepted shard, over a sound lookup, proves all its entries. -/
theorem checkShard_sound (c : Cfg) (p : Side) (lower : Pos → Bool) (t : Tree)
    (hc : checkShard c p lower t = true)
    (hl : ∀ s, lower s = true → ForceWin c p (.live s)) : TreeProved c p t := by
  have main : ∀ m k a n : Nat, n < m → t.Has k a n → ForceWin c p (.live (decode c k)) := by
    intro m
    induction m with
    | zero =>
      intro k a n hn _
      exact absurd hn (by omega)
    | succ m ih =>
      intro k a n hn hh
      have he : entryOk c p (knownBelow c t lower n) k a = true :=
        Tree.all_of_has (fun k a n => entryOk c p (knownBelow c t lower n) k a) hh hc
      exact entryOk_sound
        (knownBelow_sound (fun k' a' m' hm hh' => ih k' a' m' (by omega) hh') hl) he
  intro k a n hh
  exact main (n + 1) k a n (by omega) hh

/-- The glue to the final theorem: a position accepted by `nodeOk` over the lookup of all
shards has `ForceWin` (with the winner to move it must be an entry; otherwise every reply is
expanded as in a shard). -/
theorem root_sound (c : Cfg) (p : Side) (gs : List (Nat × List (Proved c p))) (s : Pos)
    (h : nodeOk c p (lookupTable c gs) (fuelOf c) s = true) : ForceWin c p (.live s) :=
  nodeOk_sound (lookupTable_sound c gs) (fuelOf c) s h

/-- Route a proof through `Classical.em`, so that its `#print axioms` list is always exactly
`[propext, Classical.choice, Quot.sound]` whichever tactics the proofs above happen to use.
The pinned list still catches `sorryAx`, `Lean.ofReduceBool` or any other axiom. -/
theorem pinned {P : Prop} (h : P) : P :=
  (Classical.em P).elim (fun hp => hp) (fun _ => h)

/-- The two statements the rendered modules rely on, together, so that this module pins the
axioms of its proofs: any axiom beyond the allowed three would show in the list below. -/
theorem soundness :
    (∀ c p lower t, checkShard c p lower t = true →
      (∀ s, lower s = true → ForceWin c p (.live s)) → TreeProved c p t) ∧
    (∀ c p (gs : List (Nat × List (Proved c p))) s,
      nodeOk c p (lookupTable c gs) (fuelOf c) s = true → ForceWin c p (.live s)) :=
  pinned ⟨checkShard_sound, root_sound⟩

/-- info: 'Pop.soundness' depends on axioms: [propext, Classical.choice, Quot.sound] -/
#guard_msgs (whitespace := lax) in
#print axioms soundness

end Pop
