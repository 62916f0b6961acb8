;; The byte planes of `byte-planes.ts`, with WebAssembly SIMD: the same layout, byte for byte. Memory: 2 MiB,
;; the input at 0 and the output at 1 MiB. Both functions convert `len` bytes, whole 64 KiB blocks and then
;; at most one shorter block, whose length is a multiple of 128 (16 words): the caller converts the rest.
;; Within a block of W words, plane p is W bytes: byte p of every word, in word order. Sixteen words at a
;; time: each word pair's bytes are interleaved (so a 16-bit lane holds one byte index of two words), then
;; the eight vectors are transposed as an 8x8 matrix of 16-bit lanes in three rounds of interleaving.
;; Regenerate byte-planes-wasm.ts with `node scripts/byte-planes-wasm.ts` after any change here.
(module
  (memory (export "memory") 32 32)

  (func (export "toPlanes") (param $len i32)
    (local $block i32) (local $words i32) (local $g i32) (local $in i32) (local $out i32)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128)
    (local $v4 v128) (local $v5 v128) (local $v6 v128) (local $v7 v128)
    (local $t0 v128) (local $t1 v128) (local $t2 v128) (local $t3 v128)
    (local $t4 v128) (local $t5 v128) (local $t6 v128) (local $t7 v128)
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $block) (local.get $len)))
        ;; words = min(65536, len - block) / 8
        (local.set $words (i32.shr_u
          (select (i32.const 65536) (i32.sub (local.get $len) (local.get $block))
            (i32.gt_u (i32.sub (local.get $len) (local.get $block)) (i32.const 65536)))
          (i32.const 3)))
        (local.set $g (i32.const 0))
        (block $blockDone
          (loop $groups
            (br_if $blockDone (i32.ge_u (local.get $g) (local.get $words)))
            (local.set $in (i32.add (local.get $block) (i32.shl (local.get $g) (i32.const 3))))
            ;; each vector: two words, their bytes interleaved
            (local.set $v0 (i8x16.shuffle 0 8 1 9 2 10 3 11 4 12 5 13 6 14 7 15 (v128.load offset=0 (local.get $in)) (v128.const i64x2 0 0)))
            (local.set $v1 (i8x16.shuffle 0 8 1 9 2 10 3 11 4 12 5 13 6 14 7 15 (v128.load offset=16 (local.get $in)) (v128.const i64x2 0 0)))
            (local.set $v2 (i8x16.shuffle 0 8 1 9 2 10 3 11 4 12 5 13 6 14 7 15 (v128.load offset=32 (local.get $in)) (v128.const i64x2 0 0)))
            (local.set $v3 (i8x16.shuffle 0 8 1 9 2 10 3 11 4 12 5 13 6 14 7 15 (v128.load offset=48 (local.get $in)) (v128.const i64x2 0 0)))
            (local.set $v4 (i8x16.shuffle 0 8 1 9 2 10 3 11 4 12 5 13 6 14 7 15 (v128.load offset=64 (local.get $in)) (v128.const i64x2 0 0)))
            (local.set $v5 (i8x16.shuffle 0 8 1 9 2 10 3 11 4 12 5 13 6 14 7 15 (v128.load offset=80 (local.get $in)) (v128.const i64x2 0 0)))
            (local.set $v6 (i8x16.shuffle 0 8 1 9 2 10 3 11 4 12 5 13 6 14 7 15 (v128.load offset=96 (local.get $in)) (v128.const i64x2 0 0)))
            (local.set $v7 (i8x16.shuffle 0 8 1 9 2 10 3 11 4 12 5 13 6 14 7 15 (v128.load offset=112 (local.get $in)) (v128.const i64x2 0 0)))
            (call $transpose (local.get $v0) (local.get $v1) (local.get $v2) (local.get $v3) (local.get $v4) (local.get $v5) (local.get $v6) (local.get $v7))
            ;; the eight planes' next 16 bytes
            (local.set $out (i32.add (i32.add (i32.const 1048576) (local.get $block)) (local.get $g)))
            (local.set $t7) (local.set $t6) (local.set $t5) (local.set $t4)
            (local.set $t3) (local.set $t2) (local.set $t1) (local.set $t0)
            (v128.store (local.get $out) (local.get $t0))
            (local.set $out (i32.add (local.get $out) (local.get $words)))
            (v128.store (local.get $out) (local.get $t1))
            (local.set $out (i32.add (local.get $out) (local.get $words)))
            (v128.store (local.get $out) (local.get $t2))
            (local.set $out (i32.add (local.get $out) (local.get $words)))
            (v128.store (local.get $out) (local.get $t3))
            (local.set $out (i32.add (local.get $out) (local.get $words)))
            (v128.store (local.get $out) (local.get $t4))
            (local.set $out (i32.add (local.get $out) (local.get $words)))
            (v128.store (local.get $out) (local.get $t5))
            (local.set $out (i32.add (local.get $out) (local.get $words)))
            (v128.store (local.get $out) (local.get $t6))
            (local.set $out (i32.add (local.get $out) (local.get $words)))
            (v128.store (local.get $out) (local.get $t7))
            (local.set $g (i32.add (local.get $g) (i32.const 16)))
            (br $groups)))
        (local.set $block (i32.add (local.get $block) (i32.const 65536)))
        (br $blocks))))

  (func (export "fromPlanes") (param $len i32)
    (local $block i32) (local $words i32) (local $g i32) (local $in i32) (local $out i32)
    (local $t0 v128) (local $t1 v128) (local $t2 v128) (local $t3 v128)
    (local $t4 v128) (local $t5 v128) (local $t6 v128) (local $t7 v128)
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $block) (local.get $len)))
        (local.set $words (i32.shr_u
          (select (i32.const 65536) (i32.sub (local.get $len) (local.get $block))
            (i32.gt_u (i32.sub (local.get $len) (local.get $block)) (i32.const 65536)))
          (i32.const 3)))
        (local.set $g (i32.const 0))
        (block $blockDone
          (loop $groups
            (br_if $blockDone (i32.ge_u (local.get $g) (local.get $words)))
            (local.set $in (i32.add (local.get $block) (local.get $g)))
            (call $transpose
              (v128.load (local.get $in))
              (v128.load (i32.add (local.get $in) (local.get $words)))
              (v128.load (i32.add (local.get $in) (i32.mul (local.get $words) (i32.const 2))))
              (v128.load (i32.add (local.get $in) (i32.mul (local.get $words) (i32.const 3))))
              (v128.load (i32.add (local.get $in) (i32.mul (local.get $words) (i32.const 4))))
              (v128.load (i32.add (local.get $in) (i32.mul (local.get $words) (i32.const 5))))
              (v128.load (i32.add (local.get $in) (i32.mul (local.get $words) (i32.const 6))))
              (v128.load (i32.add (local.get $in) (i32.mul (local.get $words) (i32.const 7)))))
            (local.set $t7) (local.set $t6) (local.set $t5) (local.set $t4)
            (local.set $t3) (local.set $t2) (local.set $t1) (local.set $t0)
            ;; each vector back to two words: the bytes of the first, then those of the second
            (local.set $out (i32.add (i32.add (i32.const 1048576) (local.get $block)) (i32.shl (local.get $g) (i32.const 3))))
            (v128.store offset=0 (local.get $out) (i8x16.shuffle 0 2 4 6 8 10 12 14 1 3 5 7 9 11 13 15 (local.get $t0) (local.get $t0)))
            (v128.store offset=16 (local.get $out) (i8x16.shuffle 0 2 4 6 8 10 12 14 1 3 5 7 9 11 13 15 (local.get $t1) (local.get $t1)))
            (v128.store offset=32 (local.get $out) (i8x16.shuffle 0 2 4 6 8 10 12 14 1 3 5 7 9 11 13 15 (local.get $t2) (local.get $t2)))
            (v128.store offset=48 (local.get $out) (i8x16.shuffle 0 2 4 6 8 10 12 14 1 3 5 7 9 11 13 15 (local.get $t3) (local.get $t3)))
            (v128.store offset=64 (local.get $out) (i8x16.shuffle 0 2 4 6 8 10 12 14 1 3 5 7 9 11 13 15 (local.get $t4) (local.get $t4)))
            (v128.store offset=80 (local.get $out) (i8x16.shuffle 0 2 4 6 8 10 12 14 1 3 5 7 9 11 13 15 (local.get $t5) (local.get $t5)))
            (v128.store offset=96 (local.get $out) (i8x16.shuffle 0 2 4 6 8 10 12 14 1 3 5 7 9 11 13 15 (local.get $t6) (local.get $t6)))
            (v128.store offset=112 (local.get $out) (i8x16.shuffle 0 2 4 6 8 10 12 14 1 3 5 7 9 11 13 15 (local.get $t7) (local.get $t7)))
            (local.set $g (i32.add (local.get $g) (i32.const 16)))
            (br $groups)))
        (local.set $block (i32.add (local.get $block) (i32.const 65536)))
        (br $blocks))))

  ;; The 8x8 transpose of 16-bit lanes: output k holds lane k of every input, in input order.
  (func $transpose (param $x0 v128) (param $x1 v128) (param $x2 v128) (param $x3 v128)
                   (param $x4 v128) (param $x5 v128) (param $x6 v128) (param $x7 v128)
                   (result v128 v128 v128 v128 v128 v128 v128 v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $a4 v128) (local $a5 v128) (local $a6 v128) (local $a7 v128)
    (local $b0 v128) (local $b1 v128) (local $b2 v128) (local $b3 v128)
    (local $b4 v128) (local $b5 v128) (local $b6 v128) (local $b7 v128)
    ;; 16-bit lanes of input pairs interleaved
    (local.set $a0 (i8x16.shuffle 0 1 16 17 2 3 18 19 4 5 20 21 6 7 22 23 (local.get $x0) (local.get $x1)))
    (local.set $a1 (i8x16.shuffle 8 9 24 25 10 11 26 27 12 13 28 29 14 15 30 31 (local.get $x0) (local.get $x1)))
    (local.set $a2 (i8x16.shuffle 0 1 16 17 2 3 18 19 4 5 20 21 6 7 22 23 (local.get $x2) (local.get $x3)))
    (local.set $a3 (i8x16.shuffle 8 9 24 25 10 11 26 27 12 13 28 29 14 15 30 31 (local.get $x2) (local.get $x3)))
    (local.set $a4 (i8x16.shuffle 0 1 16 17 2 3 18 19 4 5 20 21 6 7 22 23 (local.get $x4) (local.get $x5)))
    (local.set $a5 (i8x16.shuffle 8 9 24 25 10 11 26 27 12 13 28 29 14 15 30 31 (local.get $x4) (local.get $x5)))
    (local.set $a6 (i8x16.shuffle 0 1 16 17 2 3 18 19 4 5 20 21 6 7 22 23 (local.get $x6) (local.get $x7)))
    (local.set $a7 (i8x16.shuffle 8 9 24 25 10 11 26 27 12 13 28 29 14 15 30 31 (local.get $x6) (local.get $x7)))
    ;; then 32-bit lanes
    (local.set $b0 (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $a0) (local.get $a2)))
    (local.set $b1 (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $a0) (local.get $a2)))
    (local.set $b2 (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $a1) (local.get $a3)))
    (local.set $b3 (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $a1) (local.get $a3)))
    (local.set $b4 (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $a4) (local.get $a6)))
    (local.set $b5 (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $a4) (local.get $a6)))
    (local.set $b6 (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $a5) (local.get $a7)))
    (local.set $b7 (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $a5) (local.get $a7)))
    ;; then 64-bit halves
    (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $b0) (local.get $b4))
    (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $b0) (local.get $b4))
    (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $b1) (local.get $b5))
    (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $b1) (local.get $b5))
    (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $b2) (local.get $b6))
    (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $b2) (local.get $b6))
    (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $b3) (local.get $b7))
    (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $b3) (local.get $b7)))
)
