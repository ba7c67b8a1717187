/-
Rendered by `python -m harness render`; do not edit.
Certificate 0b0dc176099ff72b29f832bd74f5144e994983ea8960c4556957beae95c1a643 for pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump.
Shard 0 of 4: shard-0000-p00.jsonl.gz (blake3 98076a270b5bc9381dba4ea2c1b62dbbeba1aba0b3af2b112afa8cddff6858cc), placement rank
0, 18 stored entries and 27 aliases (positions as play
reaches them, marked /-alias-/), checked by 6 kernel declarations.
-/
import Pop
import Generated.Cert

namespace Generated.Shard0000
open Pop

def shardFile : String := "shard-0000-p00.jsonl.gz"
def shardBlake3 : String := "98076a270b5bc9381dba4ea2c1b62dbbeba1aba0b3af2b112afa8cddff6858cc"
def placementRank : Nat := 0

noncomputable def b0 : Tree :=
  .node (/-alias-/ .node (.node (.node .leaf 6992 52 1 .leaf) 11649 86 1 .leaf) 13062 23 1 (/-alias-/ .node .leaf 14467 23 1 .leaf)) 18244 85 1 (/-alias-/ .node (.node .leaf 19649 75 1 .leaf) 21140 78 1 (.node .leaf 22736 53 1 .leaf))

noncomputable def b1 : Tree :=
  /-alias-/ .node (/-alias-/ .node (.node .leaf 27016 42 1 .leaf) 34580 50 1 (.node .leaf 42117 12 1 .leaf)) 45345 88 1 (.node (.node .leaf 49944 46 1 .leaf) 50050 75 1 (.node .leaf 51352 37 1 .leaf))

noncomputable def b2 : Tree :=
  /-alias-/ .node (/-alias-/ .node (.node .leaf 67148 40 1 .leaf) 68370 48 1 (/-alias-/ .node .leaf 68392 55 1 .leaf)) 70468 85 1 (.node (/-alias-/ .node .leaf 74562 66 1 .leaf) 84035 21 1 (/-alias-/ .node .leaf 99380 53 1 .leaf))

noncomputable def b3 : Tree :=
  /-alias-/ .node (/-alias-/ .node (/-alias-/ .node .leaf 100402 21 1 .leaf) 102437 55 1 (/-alias-/ .node .leaf 106786 20 1 .leaf)) 114701 37 1 (/-alias-/ .node (/-alias-/ .node .leaf 137265 52 1 .leaf) 137347 23 1 (.node .leaf 141443 23 1 .leaf))

noncomputable def b4 : Tree :=
  /-alias-/ .node (.node (.node .leaf 151634 20 1 .leaf) 155841 75 1 (/-alias-/ .node .leaf 164905 43 1 .leaf)) 165009 50 1 (/-alias-/ .node (/-alias-/ .node .leaf 172073 43 1 .leaf) 180245 46 1 (/-alias-/ .node .leaf 180250 43 1 .leaf))

noncomputable def b5 : Tree :=
  .node (/-alias-/ .node (/-alias-/ .node .leaf 198737 48 1 .leaf) 200773 13 1 .leaf) 213013 46 1 (/-alias-/ .node .leaf 213073 48 1 .leaf)

/-- The shard: its blocks joined by separator entries (a balanced search tree on keys). -/
noncomputable def tree : Tree :=
  /-alias-/ .node (/-alias-/ .node b0 26889 10 1 (.node b1 57730 75 1 b2)) 99593 40 1 (/-alias-/ .node b3 148549 13 1 (.node b4 198682 23 1 b5))

/-- The shards already proved that this one looks into, by placement rank. -/
noncomputable def lower : List (Nat × List (Proved Generated.Cert.geo Side.x)) :=
  []

/-- The check of one entry of this shard. -/
noncomputable def entry : Nat → Nat → Nat → Bool :=
  shardEntryOk Generated.Cert.geo Side.x (lookupTable Generated.Cert.geo lower)
    placementRank tree

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- 8 entries, estimated 22949 kernel steps. -/
theorem part0 : Tree.all entry b0 = true := by
  decide +kernel

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- 8 entries, estimated 23221 kernel steps. -/
theorem part1 : (entry 26889 10 1 && Tree.all entry b1) = true := by
  decide +kernel

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- 8 entries, estimated 23716 kernel steps. -/
theorem part2 : (entry 57730 75 1 && Tree.all entry b2) = true := by
  decide +kernel

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- 8 entries, estimated 22850 kernel steps. -/
theorem part3 : (entry 99593 40 1 && Tree.all entry b3) = true := by
  decide +kernel

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- 8 entries, estimated 23625 kernel steps. -/
theorem part4 : (entry 148549 13 1 && Tree.all entry b4) = true := by
  decide +kernel

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- 5 entries, estimated 14636 kernel steps. -/
theorem part5 : (entry 198682 23 1 && Tree.all entry b5) = true := by
  decide +kernel

/-- Every entry checks: the declarations above, joined along the tree. -/
theorem all_ok : Tree.all entry tree = true :=
  Tree.all_node_of (Tree.all_node_of part0 (band_left part1) (Tree.all_node_of (band_right part1) (band_left part2) (band_right part2))) (band_left part3) (Tree.all_node_of (band_right part3) (band_left part4) (Tree.all_node_of (band_right part4) (band_left part5) (band_right part5)))

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

/-- info: 'Generated.Shard0000.sound' depends on axioms: [propext, Classical.choice, Quot.sound] -/
#guard_msgs (whitespace := lax) in
#print axioms sound

end Generated.Shard0000
