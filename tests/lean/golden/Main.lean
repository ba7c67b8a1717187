/-
Rendered by `python -m harness render`; do not edit.
The final theorem: x wins pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump from the initial position.
Certificate 0b0dc176099ff72b29f832bd74f5144e994983ea8960c4556957beae95c1a643.
-/
import Pop
import Generated.Cert
import Generated.Shard0000
import Generated.Shard0001
import Generated.Shard0002
import Generated.Shard0003

namespace Generated.Main
open Pop

/-- Every shard, by placement rank. -/
noncomputable def table : List (Nat × List (Proved Generated.Cert.geo Side.x)) :=
  [(6, [Generated.Shard0003.proved]),
   (4, [Generated.Shard0002.proved]),
   (2, [Generated.Shard0001.proved]),
   (0, [Generated.Shard0000.proved])]

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- The initial position is an entry (winner `x`), or every first action of `x` leads to a
win for `o` or to an entry (winner `o`). -/
theorem root_checked :
    nodeOk Generated.Cert.geo Side.x (lookupTable Generated.Cert.geo table)
      (fuelOf Generated.Cert.geo) (Pos.initial Generated.Cert.cfg) = true := by
  decide +kernel

/-- x has a forced win in pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump. -/
theorem initial_force_win :
    ForceWin (Geo.of ⟨3, 3, 3, .torus⟩) Side.x (Node.live (Pos.initial ⟨3, 3, 3, .torus⟩)) :=
  pinned (ForceWin.of_geo_eq Generated.Cert.geo_eq
    (root_sound Generated.Cert.geo Side.x table _ root_checked))

/-- info: 'Generated.Main.initial_force_win' depends on axioms: [propext, Classical.choice, Quot.sound] -/
#guard_msgs (whitespace := lax) in
#print axioms initial_force_win

end Generated.Main
