/-
Rendered by `python -m harness render`; do not edit.
Certificate 0b0dc176099ff72b29f832bd74f5144e994983ea8960c4556957beae95c1a643 for pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump.
Shard 0 of 4: shard-0000-p00.jsonl.gz (blake3 98076a270b5bc9381dba4ea2c1b62dbbeba1aba0b3af2b112afa8cddff6858cc), placement rank
0, 18 stored entries and 27 aliases (positions as play
reaches them, marked /-alias-/).
-/
import Pop
import Generated.Cert

namespace Generated.Shard0000
open Pop

def shardFile : String := "shard-0000-p00.jsonl.gz"
def shardBlake3 : String := "98076a270b5bc9381dba4ea2c1b62dbbeba1aba0b3af2b112afa8cddff6858cc"
def placementRank : Nat := 0

def t0 : Tree :=
  /-alias-/ .node (.node (.node .leaf 6992 52 1 .leaf) 11649 86 1 .leaf) 13062 23 1 (.node (/-alias-/ .node .leaf 14467 23 1 .leaf) 18244 85 1 .leaf)

def t1 : Tree :=
  /-alias-/ .node (.node (/-alias-/ .node .leaf 21140 78 1 .leaf) 22736 53 1 .leaf) 26889 10 1 (/-alias-/ .node (.node .leaf 27016 42 1 .leaf) 34580 50 1 .leaf)

def t2 : Tree :=
  .node t0 19649 75 1 t1

def t3 : Tree :=
  .node (.node (/-alias-/ .node .leaf 45345 88 1 .leaf) 49944 46 1 .leaf) 50050 75 1 (.node (.node .leaf 51352 37 1 .leaf) 57730 75 1 .leaf)

def t4 : Tree :=
  /-alias-/ .node (/-alias-/ .node (/-alias-/ .node .leaf 68370 48 1 .leaf) 68392 55 1 .leaf) 70468 85 1 (/-alias-/ .node .leaf 74562 66 1 .leaf)

def t5 : Tree :=
  .node t3 67148 40 1 t4

def t6 : Tree :=
  .node t2 42117 12 1 t5

def t7 : Tree :=
  /-alias-/ .node (/-alias-/ .node (/-alias-/ .node .leaf 99380 53 1 .leaf) 99593 40 1 .leaf) 100402 21 1 (/-alias-/ .node (/-alias-/ .node .leaf 102437 55 1 .leaf) 106786 20 1 .leaf)

def t8 : Tree :=
  .node (/-alias-/ .node (/-alias-/ .node .leaf 137265 52 1 .leaf) 137347 23 1 .leaf) 141443 23 1 (.node (/-alias-/ .node .leaf 148549 13 1 .leaf) 151634 20 1 .leaf)

def t9 : Tree :=
  /-alias-/ .node t7 114701 37 1 t8

def t10 : Tree :=
  /-alias-/ .node (/-alias-/ .node (/-alias-/ .node .leaf 164905 43 1 .leaf) 165009 50 1 .leaf) 172073 43 1 (/-alias-/ .node (/-alias-/ .node .leaf 180245 46 1 .leaf) 180250 43 1 .leaf)

def t11 : Tree :=
  .node (/-alias-/ .node (/-alias-/ .node .leaf 198737 48 1 .leaf) 200773 13 1 .leaf) 213013 46 1 (/-alias-/ .node .leaf 213073 48 1 .leaf)

def t12 : Tree :=
  .node t10 198682 23 1 t11

def t13 : Tree :=
  .node t9 155841 75 1 t12

def tree : Tree :=
  .node t6 84035 21 1 t13

/-- The shards already proved that this one looks into, by placement rank. -/
def lower : List (Nat × List (Proved Generated.Cert.cfg Side.x)) :=
  []

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

/-- info: 'Generated.Shard0000.sound' depends on axioms: [propext, Classical.choice, Quot.sound] -/
#guard_msgs (whitespace := lax) in
#print axioms sound

end Generated.Shard0000
