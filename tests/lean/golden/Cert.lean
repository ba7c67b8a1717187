/-
Rendered by `python -m harness render`; do not edit.
The certificate's ruleset, its tables and the winner, shared by every shard module.
-/
import Pop

namespace Generated.Cert
open Pop

/-- The ruleset pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump: board, checkers and edge (continue, binempty, king, nozero,
nojump are the model's movement). -/
def cfg : Cfg := ⟨3, 3, 3, .torus⟩

/-- The ruleset's tables as literals, so that the kernel reads them instead of recomputing
them in every declaration. -/
def geo : Geo :=
  { cfg := cfg
    size := 9
    span := 512
    rays :=
      [[.push 8 4, .push 6 3, .push 7 5, .push 2 1, .push 1 2, .push 5 7, .push 3 6, .push 4 8],
       [.push 6 5, .push 7 4, .push 8 3, .push 0 2, .push 2 0, .push 3 8, .push 4 7, .push 5 6],
       [.push 7 3, .push 8 5, .push 6 4, .push 1 0, .push 0 1, .push 4 6, .push 5 8, .push 3 7],
       [.push 2 7, .push 0 6, .push 1 8, .push 5 4, .push 4 5, .push 8 1, .push 6 0, .push 7 2],
       [.push 0 8, .push 1 7, .push 2 6, .push 3 5, .push 5 3, .push 6 2, .push 7 1, .push 8 0],
       [.push 1 6, .push 2 8, .push 0 7, .push 4 3, .push 3 4, .push 7 0, .push 8 2, .push 6 1],
       [.push 5 1, .push 3 0, .push 4 2, .push 8 7, .push 7 8, .push 2 4, .push 0 3, .push 1 5],
       [.push 3 2, .push 4 1, .push 5 0, .push 6 8, .push 8 6, .push 0 5, .push 1 4, .push 2 3],
       [.push 4 0, .push 5 2, .push 3 1, .push 7 6, .push 6 7, .push 1 3, .push 2 5, .push 0 4]]
    king :=
      [[(1, 10), (3, 12), (4, 13)],
       [(0, 18), (2, 20), (3, 21), (4, 22), (5, 23)],
       [(1, 28), (4, 31), (5, 32)],
       [(0, 36), (1, 37), (4, 40), (6, 42), (7, 43)],
       [(0, 45), (1, 46), (2, 47), (3, 48), (5, 50), (6, 51), (7, 52), (8, 53)],
       [(1, 55), (2, 56), (4, 58), (7, 61), (8, 62)],
       [(3, 66), (4, 67), (7, 70)],
       [(3, 75), (4, 76), (5, 77), (6, 78), (8, 80)],
       [(4, 85), (5, 86), (7, 88)]]
    lines :=
      [([⟨219, true, 1⟩, ⟨292, false, 2⟩],
        [⟨73, true, 2⟩, ⟨438, false, 1⟩]),
       ([⟨63, true, 3⟩, ⟨448, false, 6⟩],
        [⟨7, true, 6⟩, ⟨504, false, 3⟩]),
       ([⟨27, true, 4⟩, ⟨36, true, 1⟩, ⟨192, false, 5⟩, ⟨256, false, 8⟩],
        [⟨1, true, 8⟩, ⟨6, true, 5⟩, ⟨72, false, 1⟩, ⟨432, false, 4⟩]),
       ([⟨9, true, 5⟩, ⟨54, true, 2⟩, ⟨64, false, 4⟩, ⟨384, false, 7⟩],
        [⟨3, true, 7⟩, ⟨4, true, 4⟩, ⟨216, false, 2⟩, ⟨288, false, 5⟩])] }

set_option maxRecDepth 100000 in
/-- The literal tables are the ruleset's game: `Geo.of` computed by the kernel. -/
theorem geo_eq : geo = Geo.of cfg := by
  decide +kernel

/-- The player the certificate claims wins. -/
def winner : Side := Side.x

def rulesetId : String := "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"
def winnerName : String := "x"
def root : String := ".../.../... 3 3 x"
def certHash : String := "0b0dc176099ff72b29f832bd74f5144e994983ea8960c4556957beae95c1a643"

end Generated.Cert
