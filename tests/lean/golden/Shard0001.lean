/-
Rendered by `python -m harness render`; do not edit.
Certificate 0b0dc176099ff72b29f832bd74f5144e994983ea8960c4556957beae95c1a643 for pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump.
Shard 1 of 4: shard-0001-p02.jsonl.gz (blake3 02577d0a551a7f4c9dbb5f92939c34a3df182d947de05891361a844af09da156), placement rank
2, 23 stored entries and 25 aliases (positions as play
reaches them, marked /-alias-/), checked by 6 kernel declarations.
-/
import Pop
import Generated.Cert
import Generated.Shard0000

namespace Generated.Shard0001
open Pop

def shardFile : String := "shard-0001-p02.jsonl.gz"
def shardBlake3 : String := "02577d0a551a7f4c9dbb5f92939c34a3df182d947de05891361a844af09da156"
def placementRank : Nat := 2

noncomputable def b0 : Tree :=
  /-alias-/ .node (.node (/-alias-/ .node (.node .leaf 8657025 5 1 .leaf) 8659468 7 1 .leaf) 8659522 5 1 (.node .leaf 8659552 1 1 .leaf)) 8659588 3 1 (.node (.node .leaf 8660097 5 1 .leaf) 8661057 3 1 (/-alias-/ .node .leaf 8661312 7 1 .leaf))

noncomputable def b1 : Tree :=
  /-alias-/ .node (.node (.node .leaf 8667906 3 1 .leaf) 8667912 1 1 (.node .leaf 8668352 8 1 .leaf)) 8669201 8 1 (.node (/-alias-/ .node .leaf 8669250 0 3 .leaf) 8671249 8 1 (.node .leaf 8671298 4 3 .leaf))

noncomputable def b2 : Tree :=
  .node (.node (.node .leaf 8671489 4 1 .leaf) 8675393 3 1 (.node .leaf 8675458 3 3 .leaf)) 8684068 8 1 (.node (/-alias-/ .node .leaf 8684320 2 1 .leaf) 8685602 0 3 (/-alias-/ .node .leaf 8685704 8 3 .leaf))

noncomputable def b3 : Tree :=
  /-alias-/ .node (/-alias-/ .node (/-alias-/ .node .leaf 8717058 3 1 .leaf) 8717064 1 1 (/-alias-/ .node .leaf 8717324 4 3 .leaf)) 8717329 8 1 (/-alias-/ .node (/-alias-/ .node .leaf 8717408 4 3 .leaf) 8717569 4 1 (/-alias-/ .node .leaf 8720420 8 1 .leaf))

noncomputable def b4 : Tree :=
  /-alias-/ .node (.node (.node .leaf 8749073 8 1 .leaf) 8782348 7 1 (.node .leaf 8782370 6 1 .leaf)) 8782432 1 1 (/-alias-/ .node (/-alias-/ .node .leaf 8782468 3 1 .leaf) 8782472 2 1 (.node .leaf 8782857 6 1 .leaf))

noncomputable def b5 : Tree :=
  .node (/-alias-/ .node (.node .leaf 8784001 5 1 .leaf) 8785923 2 1 (/-alias-/ .node .leaf 8785986 5 1 .leaf)) 8798228 6 1 (/-alias-/ .node (/-alias-/ .node .leaf 8814612 0 3 .leaf) 8814625 7 1 (/-alias-/ .node .leaf 8847440 2 1 .leaf))

/-- The shard: its blocks joined by separator entries (a balanced search tree on keys). -/
noncomputable def tree : Tree :=
  /-alias-/ .node (/-alias-/ .node b0 8663073 7 1 (/-alias-/ .node b1 8671364 4 3 b2)) 8691972 5 1 (.node b3 8749068 0 3 (.node b4 8783952 0 3 b5))

/-- The shards already proved that this one looks into, by placement rank. -/
noncomputable def lower : List (Nat × List (Proved Generated.Cert.geo Side.x)) :=
  [(0, [Generated.Shard0000.proved])]

/-- The check of one entry of this shard. -/
noncomputable def entry : Nat → Nat → Nat → Bool :=
  shardEntryOk Generated.Cert.geo Side.x (lookupTable Generated.Cert.geo lower)
    placementRank tree

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- 8 entries, estimated 18105 kernel steps. -/
theorem part0 : Tree.all entry b0 = true := by
  decide +kernel

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- 8 entries, estimated 39840 kernel steps. -/
theorem part1 : (entry 8663073 7 1 && Tree.all entry b1) = true := by
  decide +kernel

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- 8 entries, estimated 60584 kernel steps. -/
theorem part2 : (entry 8671364 4 3 && Tree.all entry b2) = true := by
  decide +kernel

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- 8 entries, estimated 39848 kernel steps. -/
theorem part3 : (entry 8691972 5 1 && Tree.all entry b3) = true := by
  decide +kernel

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- 8 entries, estimated 28748 kernel steps. -/
theorem part4 : (entry 8749068 0 3 && Tree.all entry b4) = true := by
  decide +kernel

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- 8 entries, estimated 39746 kernel steps. -/
theorem part5 : (entry 8783952 0 3 && Tree.all entry b5) = true := by
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

/-- info: 'Generated.Shard0001.sound' depends on axioms: [propext, Classical.choice, Quot.sound] -/
#guard_msgs (whitespace := lax) in
#print axioms sound

end Generated.Shard0001
