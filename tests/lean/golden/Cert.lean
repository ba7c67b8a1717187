/-
Rendered by `python -m harness render`; do not edit.
The certificate's ruleset and winner, shared by every shard module.
-/
import Pop

namespace Generated.Cert
open Pop

/-- The ruleset pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump: board and checkers (torus, continue, binempty, king, nozero,
nojump are fixed by the model). -/
def cfg : Cfg := ⟨3, 3, 3⟩

/-- The player the certificate claims wins. -/
def winner : Side := Side.x

def rulesetId : String := "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"
def winnerName : String := "x"
def root : String := ".../.../... 3 3 x"
def certHash : String := "0b0dc176099ff72b29f832bd74f5144e994983ea8960c4556957beae95c1a643"

end Generated.Cert
