import Pop.NonWin
import Pop.Sound

/-!
# Soundness of the non-win checker

`nonWin_sound`: if every tree of `ts` passes `checkSet` over the membership of `ts` itself, then
no position of `ts` has `ForceWin c p`. The set may contain cycles; the proof is by induction on
`ForceWin` (a least fixed point, so only finite wins): a force-win of a position in the set
would need a force-win of a position in the set one turn later, forever, which an inductive
proof cannot contain.
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

theorem AllChecked.head {c : Geo} {p : Side} {mem : Pos → Bool} {t : Tree} {ts : List Tree}
    (h : AllChecked c p mem (t :: ts)) : checkSet c p mem t = true := by
  cases h with
  | cons _ _ h1 _ => exact h1

theorem AllChecked.tail {c : Geo} {p : Side} {mem : Pos → Bool} {t : Tree} {ts : List Tree}
    (h : AllChecked c p mem (t :: ts)) : AllChecked c p mem ts := by
  cases h with
  | cons _ _ _ h2 => exact h2

/-- Membership in checked trees gives the closure condition. -/
theorem inTrees_closed (c : Geo) (p : Side) (mem : Pos → Bool) (s : Pos) :
    ∀ ts : List Tree, AllChecked c p mem ts → inTrees c s ts = true →
      ∃ a, closedAt c p mem s a = true
  | [], _, h => by
    have h' : false = true := h
    nomatch h'
  | t :: ts, hall, h => by
    have h' : (foundAt c s (t.find (encode c s)) || inTrees c s ts) = true := h
    rcases bor_cases h' with h1 | h2
    · exact found_closed t (AllChecked.head hall) (encode c s) _ rfl h1
    · exact inTrees_closed c p mem s ts (AllChecked.tail hall) h2

/-- Soundness: no position of an accepted non-win set has `ForceWin c p`. -/
theorem nonWin_sound (c : Geo) (p : Side) (ts : List Tree)
    (hall : AllChecked c p (fun s => inTrees c s ts) ts) :
    ∀ s, inTrees c s ts = true → ¬ ForceWin c p (.live s) := by
  intro s hs hw
  exact not_forceWin_of_closed c p (fun s => inTrees c s ts)
    (fun s' hs' => inTrees_closed c p (fun s => inTrees c s ts) s' ts hall hs') (.live s) hw s rfl hs

/-- The statement the rendered modules rely on, with its axioms pinned here. -/
theorem nonWinSoundness :
    ∀ c p (ts : List Tree), AllChecked c p (fun s => inTrees c s ts) ts →
      ∀ s, inTrees c s ts = true → ¬ ForceWin c p (.live s) :=
  pinned nonWin_sound

/-- info: 'Pop.nonWinSoundness' depends on axioms: [propext, Classical.choice, Quot.sound] -/
#guard_msgs (whitespace := lax) in
#print axioms nonWinSoundness

end Pop
