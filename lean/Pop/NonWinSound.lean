import Pop.NonWin
import Pop.Sound

/-!
# Soundness of the non-win checker

`nonWin_sound`: if every piece of the index `ix` passes `checkSet` over the membership of `ix`
itself (`inIndex`), then no position of `ix` has `ForceWin g p`. The set may contain cycles; the
proof is by induction on `ForceWin` (a least fixed point, so only finite wins): a force-win of a
position in the set would need a force-win of a position in the set one turn later, forever, which
an inductive proof cannot contain.
-/

namespace Pop

theorem Side.beq_same (a : Side) : Side.beq a a = true := by
  cases a <;> rfl

theorem Side.beq_other_same (p : Side) : Side.beq p.other p = false := by
  cases p <;> rfl

/-- A force-win at a finished game is `p`'s win. -/
theorem ForceWin.over_is_win {c : Geo} {p : Side} {r : Result} (h : ForceWin c p (.over r)) :
    r = .win p := by
  cases h
  rfl

/-- An outcome kept from `p`'s win that is nevertheless a force-win node is a live position
of the set. -/
theorem okOut_live {c : Geo} {p : Side} {mem : Pos → Bool} {o : Outcome}
    (h : okOut p mem o = true) (hw : ForceWin c p o.node) :
    ∃ s, o.node = .live s ∧ mem s = true := by
  obtain ⟨next, result⟩ := o
  cases result with
  | none => exact ⟨next, rfl, h⟩
  | some r =>
    have hw' : ForceWin c p (.over r) := hw
    have hr : r = .win p := ForceWin.over_is_win hw'
    subst hr
    have h' : (!(Side.beq p p)) = true := h
    exact absurd h' (by cases p <;> decide)

/-- The heart: a closed set contains no force-win position, by induction on `ForceWin`. -/
theorem not_forceWin_of_closed (c : Geo) (p : Side) (mem : Pos → Bool)
    (hc : ∀ s, mem s = true → ∃ a, closedAt c p mem s a = true) :
    ∀ n, ForceWin c p n → ∀ s, n = .live s → mem s = true → False := by
  intro n hw
  induction hw with
  | won =>
    intro s hn _
    cases hn
  | choose s a ht ha hf ih =>
    intro s' hn hm
    have e : s = s' := Node.live.inj hn
    rw [← e] at hm
    obtain ⟨b, hb⟩ := hc s hm
    have hb' : cond (Side.beq s.turn p)
        (nonEmptyAll (fun b => okOut p mem (step c s b)) (legal c s))
        (memB b (legal c s) && okOut p mem (step c s b)) = true := hb
    have hbeq : Side.beq s.turn p = true := by
      rw [ht]
      exact Side.beq_same p
    have hall := (nonEmptyAll_sound (cond_true_of hb' hbeq)).2
    have hk : okOut p mem (step c s a) = true := hall a ha
    obtain ⟨s'', hn'', hm''⟩ := okOut_live hk hf
    exact ih s'' hn'' hm''
  | every s ht _ hf ih =>
    intro s' hn hm
    have e : s = s' := Node.live.inj hn
    rw [← e] at hm
    obtain ⟨b, hb⟩ := hc s hm
    have hb' : cond (Side.beq s.turn p)
        (nonEmptyAll (fun b => okOut p mem (step c s b)) (legal c s))
        (memB b (legal c s) && okOut p mem (step c s b)) = true := hb
    have hbeq : Side.beq s.turn p = false := by
      rw [ht]
      exact Side.beq_other_same p
    have hd := cond_false_of hb' hbeq
    have hleg : b ∈ legal c s := memB_sound (band_left hd)
    obtain ⟨s'', hn'', hm''⟩ := okOut_live (band_right hd) (hf b hleg)
    exact ih b hleg s'' hn'' hm''

/-- A lookup hit in a checked tree: the closure condition holds at the position looked for. -/
theorem found_closed {c : Geo} {p : Side} {mem : Pos → Bool} {s : Pos} (t : Tree)
    (ht : checkSet c p mem t = true) :
    ∀ (key : Nat) (o : Option Found), t.find key = o → foundAt c s o = true →
      ∃ a, closedAt c p mem s a = true
  | _, none, _, h => by
    have h' : false = true := h
    nomatch h'
  | key, some f, hf, h => by
    have h' : Pos.beq (decode c f.key) s = true := h
    have he : decode c f.key = s := Pos.eq_of_beq h'
    have hh : t.Has f.key f.act f.rank := Tree.has_of_find key t f hf
    have hk : closedAt c p mem (decode c f.key) f.act = true :=
      Tree.all_of_has (fun k a _ => closedAt c p mem (decode c k) a) hh ht
    rw [he] at hk
    exact ⟨f.act, hk⟩

/-- Either branch of a `cond` has a property, so the chosen one has it. -/
theorem cond_of_both {P : Tree → Prop} (b : Bool) {x y : Tree} (hx : P x) (hy : P y) :
    P (cond b x y) := by
  cases b
  · exact hy
  · exact hx

/-- The piece a key is routed to is one of the checked pieces. -/
theorem IndexChecked.pick {g : Geo} {p : Side} {mem : Pos → Bool} (key : Nat)
    {ix : PieceIndex} (h : IndexChecked g p mem ix) : checkSet g p mem (ix.pick key) = true := by
  induction h with
  | piece ht => exact ht
  | split _ _ ihl ihh =>
    exact cond_of_both (P := fun t => checkSet g p mem t = true) _ ihl ihh

/-- Membership in a checked index gives the closure condition. -/
theorem inIndex_closed {g : Geo} {p : Side} {mem : Pos → Bool} {ix : PieceIndex}
    (hall : IndexChecked g p mem ix) (s : Pos) (h : inIndex g s ix = true) :
    ∃ a, closedAt g p mem s a = true :=
  found_closed (ix.pick (encode g s)) (hall.pick (encode g s)) (encode g s) _ rfl h

/-- Soundness: no position of an accepted non-win set has `ForceWin g p`. -/
theorem nonWin_sound (g : Geo) (p : Side) (ix : PieceIndex)
    (hall : IndexChecked g p (fun s => inIndex g s ix) ix) :
    ∀ s, inIndex g s ix = true → ¬ ForceWin g p (.live s) := by
  intro s hs hw
  exact not_forceWin_of_closed g p (fun s => inIndex g s ix)
    (fun s' hs' => inIndex_closed hall s' hs') (.live s) hw s rfl hs

/-- No win in equal games: carries a non-win about a certificate's literal tables over to the
game `Geo.of` defines. -/
theorem not_forceWin_of_geo_eq {g g' : Geo} (e : g = g') {p : Side} {n : Node}
    (h : ¬ ForceWin g p n) : ¬ ForceWin g' p n :=
  fun hw => h (ForceWin.of_geo_eq e.symm hw)

/-- The statement the rendered modules rely on, with its axioms pinned here. -/
theorem nonWinSoundness :
    ∀ g p (ix : PieceIndex), IndexChecked g p (fun s => inIndex g s ix) ix →
      ∀ s, inIndex g s ix = true → ¬ ForceWin g p (.live s) :=
  pinned nonWin_sound

/-- info: 'Pop.nonWinSoundness' depends on axioms: [propext, Classical.choice, Quot.sound] -/
#guard_msgs (whitespace := lax) in
#print axioms nonWinSoundness

end Pop
