import Pop

/-!
# Examples of the model, checked by the kernel

Expected values come from the Python mirror (`harness/lean/model.py`), which agrees with the
reference engine on the transition corpus; the records below are corpus records (their rule
branches in the comments) plus a both-stuck draw found by search. Build: `lake build PopTest`.
-/

namespace PopTest
open Pop

example : legal (Geo.of ⟨3, 3, 3, .torus⟩) (Pos.initial ⟨3, 3, 3, .torus⟩) = [0, 1, 2, 3, 4, 5, 6, 7, 8] := by
  decide +kernel

example : (decode (Geo.of ⟨4, 4, 8, .torus⟩) (encode (Geo.of ⟨4, 4, 8, .torus⟩) (Pos.initial ⟨4, 4, 8, .torus⟩))).xbin = 8 := by
  decide +kernel

-- ..../..../..../.... 8 8 x b2 -> ..../.x../..../.... 7 8 o None: place
example : legal (Geo.of ⟨4, 4, 8, .torus⟩) (decode (Geo.of ⟨4, 4, 8, .torus⟩) 1133871366144) = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] := by decide +kernel
example : encode (Geo.of ⟨4, 4, 8, .torus⟩) (step (Geo.of ⟨4, 4, 8, .torus⟩) (decode (Geo.of ⟨4, 4, 8, .torus⟩) 1133871366144) 5).next = 5527622909984 := by decide +kernel
example : resultCode (step (Geo.of ⟨4, 4, 8, .torus⟩) (decode (Geo.of ⟨4, 4, 8, .torus⟩) 1133871366144) 5).result = 0 := by decide +kernel

-- .o.o/x.x./.o.o/..x./xo.x 0 0 o b1-a1 -> o.o./..x./xo.o/x.x./.o.x 0 0 x None: move_king, move_from_edge, push, push_wrap, push_blocked_occupied
example : legal (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1126040041242704) = [40, 42, 45, 82, 87, 205, 208, 210, 212, 213, 247, 250, 255, 372, 373, 378] := by decide +kernel
example : encode (Geo.of ⟨5, 4, 5, .torus⟩) (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1126040041242704) 40).next = 140129096000 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1126040041242704) 40).result = 0 := by decide +kernel

-- ..o../...../...../...../..... 8 7 x c2 -> ...../..x../...../...../..o.. 7 7 o None: place, push, push_wrap
example : legal (Geo.of ⟨5, 5, 8, .torus⟩) (decode (Geo.of ⟨5, 5, 8, .torus⟩) 261208778521706496) = [0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24] := by decide +kernel
example : encode (Geo.of ⟨5, 5, 8, .torus⟩) (step (Geo.of ⟨5, 5, 8, .torus⟩) (decode (Geo.of ⟨5, 5, 8, .torus⟩) 261208778521706496) 7).next = 1413145120575848576 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 5, 8, .torus⟩) (decode (Geo.of ⟨5, 5, 8, .torus⟩) 261208778521706496) 7).result = 0 := by decide +kernel

-- ..../...o/..x./..../.x.. 3 4 o b1 -> .o../...o/..x./.x../.... 3 3 x None: place, push, push_wrap
example : legal (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1269936064431104) = [0, 1, 2, 3, 4, 5, 6, 8, 9, 11, 12, 13, 14, 15, 16, 18, 19] := by decide +kernel
example : encode (Geo.of ⟨5, 4, 5, .torus⟩) (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1269936064431104) 1).next = 108851787473920 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1269936064431104) 1).result = 0 := by decide +kernel

-- o.../..x./xo.x/..../oxxo 0 1 o b1 -> .o.o/..x./xo.x/.x../o.xo 0 0 x x: place, push, push_wrap, push_blocked_occupied, push_blocked_shared, line_diagonal, win_opponent
example : legal (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1161703292537152) = [1, 2, 3, 4, 5, 7, 10, 12, 13, 14, 15] := by decide +kernel
example : encode (Geo.of ⟨5, 4, 5, .torus⟩) (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1161703292537152) 1).next = 619022920000 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1161703292537152) 1).result = 1 := by decide +kernel

-- .o.o/..../..../.... 8 6 x a1 -> xo.o/..../..../.... 7 6 o None: place, push_blocked_shared
example : legal (Geo.of ⟨4, 4, 8, .torus⟩) (decode (Geo.of ⟨4, 4, 8, .torus⟩) 858994114560) = [0, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] := by decide +kernel
example : encode (Geo.of ⟨4, 4, 8, .torus⟩) (step (Geo.of ⟨4, 4, 8, .torus⟩) (decode (Geo.of ⟨4, 4, 8, .torus⟩) 858994114560) 0).next = 5252745658369 := by decide +kernel
example : resultCode (step (Geo.of ⟨4, 4, 8, .torus⟩) (decode (Geo.of ⟨4, 4, 8, .torus⟩) 858994114560) 0).result = 0 := by decide +kernel

-- ...xx/x..../...../...../..... 5 8 x a3 -> x..xx/...../x..../...../..... 4 8 o x: place, push, line_horizontal, line_wrapped, win_mover
example : legal (Geo.of ⟨5, 5, 8, .torus⟩) (decode (Geo.of ⟨5, 5, 8, .torus⟩) 293859875685924920) = [0, 1, 2, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24] := by decide +kernel
example : encode (Geo.of ⟨5, 5, 8, .torus⟩) (step (Geo.of ⟨5, 5, 8, .torus⟩) (decode (Geo.of ⟨5, 5, 8, .torus⟩) 293859875685924920) 10).next = 1445655480385930265 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 5, 8, .torus⟩) (decode (Geo.of ⟨5, 5, 8, .torus⟩) 293859875685924920) 10).result = 1 := by decide +kernel

-- x.x./o.../o.xo/.o../.x.x 0 1 o a4 -> x.x./o.o./o.x./o.o./.x.x 0 0 x o: place, push, push_wrap, push_blocked_occupied, line_vertical, win_mover
example : legal (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1161095302218757) = [1, 3, 5, 6, 7, 9, 12, 14, 15, 16, 18] := by decide +kernel
example : encode (Geo.of ⟨5, 4, 5, .torus⟩) (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1161095302218757) 12).next = 21827814405 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1161095302218757) 12).result = 2 := by decide +kernel

-- .o../...o/.o.x/..../.x.x 2 2 x a4 -> .o../...o/.o.x/x.../.x.x 1 2 o x: place, push_blocked_shared, line_diagonal, line_wrapped, win_mover
example : legal (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 72568441276416) = [0, 2, 3, 4, 5, 6, 8, 10, 12, 13, 14, 15, 16, 18] := by decide +kernel
example : encode (Geo.of ⟨5, 4, 5, .torus⟩) (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 72568441276416) 12).next = 1197368836495360 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 72568441276416) 12).result = 1 := by decide +kernel

-- o.../.o.o/x.../.xox/.x.. 1 1 x a5 -> ..../oo.o/x.../.xox/x.x. 0 1 o draw: place, push, push_wrap, push_blocked_shared, line_horizontal, line_diagonal, line_antidiagonal, line_wrapped, draw_lines
example : legal (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 36301232578816) = [1, 2, 3, 4, 6, 9, 10, 11, 12, 16, 18, 19] := by decide +kernel
example : encode (Geo.of ⟨5, 4, 5, .torus⟩) (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 36301232578816) 16).next = 1161101643718912 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 36301232578816) 16).result = 3 := by decide +kernel

-- .x.o/.o.x/..../.x.o/...x 1 2 o a3 -> .x.o/.o.x/o.../.x.o/...x 1 1 x o: place, push_blocked_shared, line_antidiagonal, line_wrapped, win_mover
example : legal (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1197402564862082) = [0, 2, 4, 6, 8, 9, 10, 11, 12, 14, 16, 17, 18] := by decide +kernel
example : encode (Geo.of ⟨5, 4, 5, .torus⟩) (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1197402564862082) 8).next = 36318554366082 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 1197402564862082) 8).result = 2 := by decide +kernel

-- ..../.o../..../x..x/...o 3 3 x c4 -> o.../.o../..../x.xx/.... 2 3 o x: place, push, push_wrap, push_blocked_occupied, line_horizontal, line_wrapped, win_mover
example : legal (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 109401440555008) = [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 13, 14, 16, 17, 18] := by decide +kernel
example : encode (Geo.of ⟨5, 4, 5, .torus⟩) (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 109401440555008) 14).next = 1233652081020928 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 109401440555008) 14).result = 1 := by decide +kernel

-- o.o./..x./xo.o/x.x./.o.x 0 0 x c4-b4 -> ooo./.oxx/...o/.x.x/...x 0 0 o o: move_king, push, push_wrap, line_horizontal, win_opponent
example : legal (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 140129096000) = [141, 143, 145, 147, 150, 184, 185, 193, 273, 276, 310, 313, 315, 318, 415, 418] := by decide +kernel
example : encode (Geo.of ⟨5, 4, 5, .torus⟩) (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 140129096000) 313).next = 1125902095786176 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 4, 5, .torus⟩) (decode (Geo.of ⟨5, 4, 5, .torus⟩) 140129096000) 313).result = 2 := by decide +kernel

-- .xxo/o.o./x.xo/x... 3 4 o b2 -> ..xo/ooo./x.xo/xx.. 3 3 x draw: place, push, push_wrap, push_blocked_shared, line_horizontal, line_diagonal, line_wrapped, draw_lines
example : legal (Geo.of ⟨4, 4, 8, .torus⟩) (decode (Geo.of ⟨4, 4, 8, .torus⟩) 4960827217158) = [0, 5, 7, 9, 13, 14, 15] := by decide +kernel
example : encode (Geo.of ⟨4, 4, 8, .torus⟩) (step (Geo.of ⟨4, 4, 8, .torus⟩) (decode (Geo.of ⟨4, 4, 8, .torus⟩) 4960827217158) 5).next = 425343857924 := by decide +kernel
example : resultCode (step (Geo.of ⟨4, 4, 8, .torus⟩) (decode (Geo.of ⟨4, 4, 8, .torus⟩) 4960827217158) 5).result = 3 := by decide +kernel

-- ooxx/xxoo/oox./xxoo 1 0 x d3: both players stuck, a draw
example : legal (Geo.of ⟨4, 4, 8, .torus⟩) (decode (Geo.of ⟨4, 4, 8, .torus⟩) 7579317308) = [11] := by decide +kernel
example : encode (Geo.of ⟨4, 4, 8, .torus⟩) (step (Geo.of ⟨4, 4, 8, .torus⟩) (decode (Geo.of ⟨4, 4, 8, .torus⟩) 7579317308) 11).next = 4401330863164 := by decide +kernel
example : resultCode (step (Geo.of ⟨4, 4, 8, .torus⟩) (decode (Geo.of ⟨4, 4, 8, .torus⟩) 7579317308) 11).result = 3 := by decide +kernel

-- The other edges: a push through the Klein twist, falls, a blocked edge, a ringout loss.
-- .o.../...../...../...../..... 8 7 x b2 -> ...../.x.../...../...../...o. 7 7 o None: place, push, push_wrap, push_twist
example : legal (Geo.of ⟨5, 5, 8, .klein⟩) (decode (Geo.of ⟨5, 5, 8, .klein⟩) 261208778454597632) = [0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24] := by decide +kernel
example : encode (Geo.of ⟨5, 5, 8, .klein⟩) (step (Geo.of ⟨5, 5, 8, .klein⟩) (decode (Geo.of ⟨5, 5, 8, .klein⟩) 261208778454597632) 6).next = 1413285858064203840 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 5, 8, .klein⟩) (decode (Geo.of ⟨5, 5, 8, .klein⟩) 261208778454597632) 6).result = 0 := by decide +kernel

-- ..o../...../...../...../..... 8 7 x c2 -> ..o../..x../...../...../..... 7 7 o None: place, fall_blocked
example : legal (Geo.of ⟨5, 5, 8, .blocked⟩) (decode (Geo.of ⟨5, 5, 8, .blocked⟩) 261208778521706496) = [0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24] := by decide +kernel
example : encode (Geo.of ⟨5, 5, 8, .blocked⟩) (step (Geo.of ⟨5, 5, 8, .blocked⟩) (decode (Geo.of ⟨5, 5, 8, .blocked⟩) 261208778521706496) 7).next = 1413004383221710976 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 5, 8, .blocked⟩) (decode (Geo.of ⟨5, 5, 8, .blocked⟩) 261208778521706496) 7).result = 0 := by decide +kernel

-- ..o../...../...../...../..... 8 7 x c2 -> ...../..x../...../...../..... 7 8 o None: place, fall_reincarnation
example : legal (Geo.of ⟨5, 5, 8, .reincarnation⟩) (decode (Geo.of ⟨5, 5, 8, .reincarnation⟩) 261208778521706496) = [0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24] := by decide +kernel
example : encode (Geo.of ⟨5, 5, 8, .reincarnation⟩) (step (Geo.of ⟨5, 5, 8, .reincarnation⟩) (decode (Geo.of ⟨5, 5, 8, .reincarnation⟩) 261208778521706496) 7).next = 1449033180106457216 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 5, 8, .reincarnation⟩) (decode (Geo.of ⟨5, 5, 8, .reincarnation⟩) 261208778521706496) 7).result = 0 := by decide +kernel

-- ..o../...../...../...../..... 8 7 x c2 -> ...../..x../...../...../..... 7 7 o None: place, fall_ringout
example : legal (Geo.of ⟨5, 5, 8, .ringout⟩) (decode (Geo.of ⟨5, 5, 8, .ringout⟩) 261208778521706496) = [0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24] := by decide +kernel
example : encode (Geo.of ⟨5, 5, 8, .ringout⟩) (step (Geo.of ⟨5, 5, 8, .ringout⟩) (decode (Geo.of ⟨5, 5, 8, .ringout⟩) 261208778521706496) 7).next = 1413004383087493248 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 5, 8, .ringout⟩) (decode (Geo.of ⟨5, 5, 8, .ringout⟩) 261208778521706496) 7).result = 0 := by decide +kernel

-- ..o../...../...../...../..... 3 2 x c2 -> ...../..x../...../...../..... 2 2 o x: place, fall_ringout, ringout_loss
example : legal (Geo.of ⟨5, 5, 3, .ringout⟩) (decode (Geo.of ⟨5, 5, 3, .ringout⟩) 75435293892673536) = [0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24] := by decide +kernel
example : encode (Geo.of ⟨5, 5, 3, .ringout⟩) (step (Geo.of ⟨5, 5, 3, .ringout⟩) (decode (Geo.of ⟨5, 5, 3, .ringout⟩) 75435293892673536) 7).next = 1227230898458460288 := by decide +kernel
example : resultCode (step (Geo.of ⟨5, 5, 3, .ringout⟩) (decode (Geo.of ⟨5, 5, 3, .ringout⟩) 75435293892673536) 7).result = 1 := by decide +kernel
-- oox/..x/ox. 2 2 x c3: x wins at once, so the position has `ForceWin` with nothing proved below.
theorem nothing_below : ∀ s : Pos, false = true → ForceWin (Geo.of ⟨3, 3, 5, .torus⟩) Side.x (.live s) :=
  fun _ h => nomatch h

set_option maxRecDepth 100000 in
theorem immediate_win : ForceWin (Geo.of ⟨3, 3, 5, .torus⟩) Side.x (.live (decode (Geo.of ⟨3, 3, 5, .torus⟩) 17335972)) :=
  pinned (entryOk_sound nothing_below (a := 8) (by decide +kernel))

/-- info: 'PopTest.immediate_win' depends on axioms: [propext, Classical.choice, Quot.sound] -/
#guard_msgs (whitespace := lax) in
#print axioms immediate_win

-- The same position as a one-entry shard and a one-shard table: the steps every rendered
-- `ShardNNNN.lean` and `Main.lean` take, on data small enough to read.
def oneEntry : Tree := .node .leaf 17335972 8 0 .leaf

set_option maxRecDepth 100000 in
theorem oneEntry_checked : checkShard (Geo.of ⟨3, 3, 5, .torus⟩) Side.x (fun _ => false) 4 oneEntry = true := by
  decide +kernel

theorem oneEntry_sound : TreeProved (Geo.of ⟨3, 3, 5, .torus⟩) Side.x oneEntry :=
  pinned (checkShard_sound _ _ _ 4 oneEntry oneEntry_checked nothing_below)

def oneEntryTable : List (Nat × List (Proved (Geo.of ⟨3, 3, 5, .torus⟩) Side.x)) :=
  [(4, [⟨oneEntry, oneEntry_sound⟩])]

set_option maxRecDepth 100000 in
theorem oneEntry_root_checked :
    nodeOk (Geo.of ⟨3, 3, 5, .torus⟩) Side.x (lookupTable (Geo.of ⟨3, 3, 5, .torus⟩) oneEntryTable) (fuelOf (Geo.of ⟨3, 3, 5, .torus⟩))
      (decode (Geo.of ⟨3, 3, 5, .torus⟩) 17335972) = true := by
  decide +kernel

theorem oneEntry_root : ForceWin (Geo.of ⟨3, 3, 5, .torus⟩) Side.x (.live (decode (Geo.of ⟨3, 3, 5, .torus⟩) 17335972)) :=
  pinned (root_sound _ _ oneEntryTable _ oneEntry_root_checked)

/-- info: 'PopTest.oneEntry_sound' depends on axioms: [propext, Classical.choice, Quot.sound] -/
#guard_msgs (whitespace := lax) in
#print axioms oneEntry_sound

/-- info: 'PopTest.oneEntry_root' depends on axioms: [propext, Classical.choice, Quot.sound] -/
#guard_msgs (whitespace := lax) in
#print axioms oneEntry_root

end PopTest
