/-
Rendered by `python -m harness render`; do not edit.
Certificate 0b0dc176099ff72b29f832bd74f5144e994983ea8960c4556957beae95c1a643 for pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump.
Shard 3 of 4: shard-0003-p06.jsonl.gz (blake3 582495ff73b7642a59f3e095f23c5b59a91fd8c59f1358ecfc0bfb84ded33797), placement rank
6, 1 stored entries and 0 aliases (positions as play
reaches them, marked /-alias-/), checked by 1 kernel declarations.
-/
import Pop
import Generated.Cert
import Generated.Shard0000
import Generated.Shard0001
import Generated.Shard0002

namespace Generated.Shard0003
open Pop

def shardFile : String := "shard-0003-p06.jsonl.gz"
def shardBlake3 : String := "582495ff73b7642a59f3e095f23c5b59a91fd8c59f1358ecfc0bfb84ded33797"
def placementRank : Nat := 6

noncomputable def b0 : Tree :=
  .node .leaf 25952256 0 7 .leaf

/-- The shard: its blocks joined by separator entries (a balanced search tree on keys). -/
noncomputable def tree : Tree :=
  b0

/-- The shards already proved that this one looks into, by placement rank. -/
noncomputable def lower : List (Nat × List (Proved Generated.Cert.geo Side.x)) :=
  [(4, [Generated.Shard0002.proved]),
   (2, [Generated.Shard0001.proved]),
   (0, [Generated.Shard0000.proved])]

/-- The check of one entry of this shard. -/
noncomputable def entry : Nat → Nat → Nat → Bool :=
  shardEntryOk Generated.Cert.geo Side.x (lookupTable Generated.Cert.geo lower)
    placementRank tree

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- 1 entries, estimated 17990 kernel steps. -/
theorem part0 : Tree.all entry b0 = true := by
  decide +kernel

/-- Every entry checks: the declarations above, joined along the tree. -/
theorem all_ok : Tree.all entry tree = true :=
  part0

/-- The kernel's verdict on this shard, from its parts. -/
theorem checked :
    checkShard Generated.Cert.geo Side.x (lookupTable Generated.Cert.geo lower)
      placementRank tree = true :=
  all_ok

/-- Every entry of this shard has `ForceWin`. -/
theorem sound : TreeProved Generated.Cert.geo Side.x tree :=
  pinned (checkShard_sound Generated.Cert.geo Side.x _ placementRank tree checked
    (lookupTable_sound Generated.Cert.geo lower))

noncomputable def proved : Proved Generated.Cert.geo Side.x := ⟨tree, sound⟩

/-- info: 'Generated.Shard0003.sound' depends on axioms: [propext, Classical.choice, Quot.sound] -/
#guard_msgs (whitespace := lax) in
#print axioms sound

end Generated.Shard0003
