/-
Rendered by `python -m harness render`; do not edit.
Certificate 0b0dc176099ff72b29f832bd74f5144e994983ea8960c4556957beae95c1a643 for pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump.
Shard 1 of 4: shard-0001-p02.jsonl.gz (blake3 02577d0a551a7f4c9dbb5f92939c34a3df182d947de05891361a844af09da156), placement rank
2, 23 stored entries and 25 aliases (positions as play
reaches them, marked /-alias-/).
-/
import Pop
import Generated.Cert
import Generated.Shard0000

namespace Generated.Shard0001
open Pop

def shardFile : String := "shard-0001-p02.jsonl.gz"
def shardBlake3 : String := "02577d0a551a7f4c9dbb5f92939c34a3df182d947de05891361a844af09da156"
def placementRank : Nat := 2

def t0 : Tree :=
  .node (/-alias-/ .node (.node .leaf 8657025 5 1 .leaf) 8659468 7 1 (.node .leaf 8659522 5 1 .leaf)) 8659552 1 1 (.node (/-alias-/ .node .leaf 8659588 3 1 .leaf) 8660097 5 1 .leaf)

def t1 : Tree :=
  .node (/-alias-/ .node (/-alias-/ .node .leaf 8661312 7 1 .leaf) 8663073 7 1 .leaf) 8667906 3 1 (.node (.node .leaf 8667912 1 1 .leaf) 8668352 8 1 .leaf)

def t2 : Tree :=
  .node t0 8661057 3 1 t1

def t3 : Tree :=
  .node (.node (/-alias-/ .node .leaf 8669250 0 3 .leaf) 8671249 8 1 .leaf) 8671298 4 3 (.node (/-alias-/ .node .leaf 8671364 4 3 .leaf) 8671489 4 1 .leaf)

def t4 : Tree :=
  /-alias-/ .node (.node (.node .leaf 8675458 3 3 .leaf) 8684068 8 1 .leaf) 8684320 2 1 (/-alias-/ .node (.node .leaf 8685602 0 3 .leaf) 8685704 8 3 .leaf)

def t5 : Tree :=
  .node t3 8675393 3 1 t4

def t6 : Tree :=
  /-alias-/ .node t2 8669201 8 1 t5

def t7 : Tree :=
  /-alias-/ .node (/-alias-/ .node (/-alias-/ .node .leaf 8717058 3 1 .leaf) 8717064 1 1 .leaf) 8717324 4 3 (/-alias-/ .node (/-alias-/ .node .leaf 8717329 8 1 .leaf) 8717408 4 3 .leaf)

def t8 : Tree :=
  .node (.node (/-alias-/ .node .leaf 8720420 8 1 .leaf) 8749068 0 3 .leaf) 8749073 8 1 (.node (.node .leaf 8782348 7 1 .leaf) 8782370 6 1 .leaf)

def t9 : Tree :=
  /-alias-/ .node t7 8717569 4 1 t8

def t10 : Tree :=
  .node (/-alias-/ .node (/-alias-/ .node .leaf 8782468 3 1 .leaf) 8782472 2 1 .leaf) 8782857 6 1 (.node (.node .leaf 8783952 0 3 .leaf) 8784001 5 1 .leaf)

def t11 : Tree :=
  /-alias-/ .node (.node (/-alias-/ .node .leaf 8785986 5 1 .leaf) 8798228 6 1 .leaf) 8814612 0 3 (/-alias-/ .node (/-alias-/ .node .leaf 8814625 7 1 .leaf) 8847440 2 1 .leaf)

def t12 : Tree :=
  /-alias-/ .node t10 8785923 2 1 t11

def t13 : Tree :=
  /-alias-/ .node t9 8782432 1 1 t12

def tree : Tree :=
  /-alias-/ .node t6 8691972 5 1 t13

/-- The shards already proved that this one looks into, by placement rank. -/
def lower : List (Nat × List (Proved Generated.Cert.cfg Side.x)) :=
  [(0, [Generated.Shard0000.proved])]

set_option maxRecDepth 100000 in
set_option maxHeartbeats 0 in
/-- The kernel runs the checker on this shard. -/
theorem checked :
    checkShard Generated.Cert.cfg Side.x (lookupTable Generated.Cert.cfg lower) tree = true := by
  decide +kernel

/-- Every entry of this shard has `ForceWin`. -/
theorem sound : TreeProved Generated.Cert.cfg Side.x tree :=
  pinned (checkShard_sound Generated.Cert.cfg Side.x _ tree checked
    (lookupTable_sound Generated.Cert.cfg lower))

def proved : Proved Generated.Cert.cfg Side.x := ⟨tree, sound⟩

/-- info: 'Generated.Shard0001.sound' depends on axioms: [propext, Classical.choice, Quot.sound] -/
#guard_msgs (whitespace := lax) in
#print axioms sound

end Generated.Shard0001
