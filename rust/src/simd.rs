//! Small numeric kernels written so that the compiler vectorises them (fixed evaluation order, no
//! fast-math), with an AVX-512F and an AVX2 copy chosen at run time on x86-64. Every copy runs the same
//! operations in the same order (no FMA contraction), so results are bit-identical whichever copy runs.
//!
//! The polynomial constants keep the digits of their published sources (Cephes); each is rounded to
//! its float type once, at compile time.
#![allow(clippy::excessive_precision)]

/// Run `$body` through an AVX-512F-compiled copy when the CPU has AVX-512F, else an AVX2 copy when it has AVX2,
/// else the baseline copy: the same operations in the same order (no FMA contraction), so bit-identical results.
macro_rules! dispatch_avx512_avx2 {
    (fn $name:ident($($arg:ident : $ty:ty),*) -> $ret:ty $body:block) => {
        // A kernel takes what it needs (kernel_greedy's take eight arguments).
        #[allow(clippy::too_many_arguments)]
        pub fn $name($($arg: $ty),*) -> $ret {
            #[inline(always)]
            #[allow(clippy::too_many_arguments)]
            fn imp($($arg: $ty),*) -> $ret $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f")]
                #[allow(clippy::too_many_arguments)]
                unsafe fn avx512($($arg: $ty),*) -> $ret { imp($($arg),*) }
                #[target_feature(enable = "avx2")]
                #[allow(clippy::too_many_arguments)]
                unsafe fn avx2($($arg: $ty),*) -> $ret { imp($($arg),*) }
                if std::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU supports AVX-512F, checked just above.
                    return unsafe { avx512($($arg),*) };
                }
                if std::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU supports AVX2, checked just above.
                    return unsafe { avx2($($arg),*) };
                }
            }
            imp($($arg),*)
        }
    };
}

pub(crate) use dispatch_avx512_avx2;

// Cody–Waite split of pi/2 (Cephes sinf/cosf constants doubled): exact products for |q| < 2^12.
const PIO2_1: f32 = 1.570_312_5;
const PIO2_2: f32 = 4.837_512_969_970_703e-4;
const PIO2_3: f32 = 7.549_789_954_891_882e-8;
const TWO_OVER_PI: f32 = std::f32::consts::FRAC_2_PI;
const ROUND_MAGIC: f32 = 12_582_912.0; // 1.5 * 2^23: (x + M) - M rounds to nearest for |x| < 2^22

/// `cos_f32` is accurate for `|x| < COS_DOMAIN`; callers check their arguments against it.
pub const COS_DOMAIN: f32 = 4096.0;

// Cephes minimax coefficients of sin r ≈ r + r z (S1 + z (S2 + z S3)) and
// cos r ≈ 1 − z/2 + z² (C1 + z (C2 + z C3)), z = r², |r| ≤ π/4.
const S1: f32 = -1.666_665_461_1e-1;
const S2: f32 = 8.332_160_873_6e-3;
const S3: f32 = -1.951_529_589_1e-4;
const C1: f32 = 4.166_664_568_298_827e-2;
const C2: f32 = -1.388_731_625_493_765e-3;
const C3: f32 = 2.443_315_711_809_948e-5;

/// cos(x) for |x| < 2^12, absolute error below 2e-7 (Cephes single-precision polynomials after a
/// three-constant Cody–Waite reduction by pi/2).
#[inline(always)]
pub fn cos_f32(x: f32) -> f32 {
    let kf = x * TWO_OVER_PI + ROUND_MAGIC;
    let k = kf - ROUND_MAGIC;
    // kf's mantissa holds k + 2^22 exactly (its ulp is 1) and 2^22 = 0 mod 4: read k mod 4 from the bits
    // (a float-to-int `as` cast would not vectorise: Rust's saturating semantics scalarise it).
    let q = kf.to_bits() as i32;
    let r = ((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3;
    let z = r * r;
    let s = r + r * z * (S1 + z * (S2 + z * S3));
    let c = 1.0 - 0.5 * z + z * z * (C1 + z * (C2 + z * C3));
    // cos(r + q pi/2) = cos r, -sin r, -cos r, sin r for q mod 4 = 0, 1, 2, 3.
    let v = if q & 1 == 0 { c } else { s };
    if (q + 1) & 2 == 0 { v } else { -v }
}

/// [`cos_f32`] on sixteen lanes with AVX-512F: the same operations in the same order (separate
/// multiplies and adds, no FMA), so every lane is bit-identical to `cos_f32` of that lane.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
pub(crate) fn cos16(x: std::arch::x86_64::__m512) -> std::arch::x86_64::__m512 {
    use std::arch::x86_64::*;
    let (add, sub, mul, set) = (_mm512_add_ps, _mm512_sub_ps, _mm512_mul_ps, _mm512_set1_ps);
    let kf = add(mul(x, set(TWO_OVER_PI)), set(ROUND_MAGIC));
    let k = sub(kf, set(ROUND_MAGIC));
    let q = _mm512_castps_si512(kf);
    let r = sub(sub(sub(x, mul(k, set(PIO2_1))), mul(k, set(PIO2_2))), mul(k, set(PIO2_3)));
    let z = mul(r, r);
    // r + ((r z) (S1 + z (S2 + z S3))), as Rust parses `r + r * z * (..)`.
    let s = add(r, mul(mul(r, z), add(set(S1), mul(z, add(set(S2), mul(z, set(S3)))))));
    // ((1 − 0.5 z) + (z z) (C1 + z (C2 + z C3))).
    let c = add(sub(set(1.0), mul(set(0.5), z)), mul(mul(z, z), add(set(C1), mul(z, add(set(C2), mul(z, set(C3)))))));
    let odd = _mm512_test_epi32_mask(q, _mm512_set1_epi32(1));
    let v = _mm512_mask_blend_ps(odd, c, s);
    let flip = _mm512_test_epi32_mask(_mm512_add_epi32(q, _mm512_set1_epi32(1)), _mm512_set1_epi32(2));
    let neg = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(v), _mm512_set1_epi32(i32::MIN)));
    _mm512_mask_blend_ps(flip, v, neg)
}

dispatch_avx512_avx2! {
fn cos_scale_inplace(xs: &mut [f32], offset: &[f32], scale: f32) -> () {
    // xs is a row-major block with rows of length offset.len(): x <- scale * cos(x + offset).
    let d = offset.len();
    // Zero-width rows have nothing to transform (and `chunks_exact_mut(0)` would panic).
    if d == 0 {
        return;
    }
    for row in xs.chunks_exact_mut(d) {
        for (x, &b) in row.iter_mut().zip(offset) {
            *x = scale * cos_f32(*x + b);
        }
    }
}
}

/// exp(x) for x <= 0 in double precision: relative error below 1e-15 for x >= -708; 0 below -708
/// (where exp(x) < 3.4e-308, negligible in every kernel sum here). Branch-free and free of
/// operations AVX2 lacks (no float-to-int64 conversion, no 64-bit arithmetic shift), so it vectorises.
#[inline(always)]
pub fn exp_neg_f64(x: f64) -> f64 {
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
    const MAGIC: f64 = 6_755_399_441_055_744.0; // 1.5 * 2^52
    let under = x < -708.0;
    let x = if under { -708.0 } else { x };
    let kf = x * LOG2E + MAGIC;
    let k = kf - MAGIC;
    // kf's mantissa holds k exactly (its ulp is 1): read k from the bits.
    let ki = kf.to_bits().wrapping_sub(MAGIC.to_bits()); // k in [-1022, 0] as a two's-complement u64
    let r = (x - k * LN2_HI) - k * LN2_LO; // |r| <= ln2/2
    // Taylor polynomial of degree 13 on |r| <= 0.347: truncation error < 5e-18 relative. Horner's rule
    // as one statement per degree (the same operations as the nested expression; a 13-deep nested
    // expression sends rustfmt into exponential time).
    let mut p = 1.0 / 6_227_020_800.0;
    p = 1.0 / 479_001_600.0 + r * p;
    p = 1.0 / 39_916_800.0 + r * p;
    p = 1.0 / 3_628_800.0 + r * p;
    p = 1.0 / 362_880.0 + r * p;
    p = 1.0 / 40320.0 + r * p;
    p = 1.0 / 5040.0 + r * p;
    p = 1.0 / 720.0 + r * p;
    p = 1.0 / 120.0 + r * p;
    p = 1.0 / 24.0 + r * p;
    p = 1.0 / 6.0 + r * p;
    p = 1.0 / 2.0 + r * p;
    p = 1.0 + r * p;
    p = 1.0 + r * p;
    let scale = f64::from_bits(ki.wrapping_add(1023) << 52); // 2^k, a normal number
    let y = p * scale;
    if under { 0.0 } else { y }
}

dispatch_avx512_avx2! {
fn sum_rbf_block(sq_a: &[f64], sq_b: &[f64], gram: &[f32], gamma: f64) -> f64 {
    // sum_{i,j} exp(-gamma * max(0, |a_i|^2 + |b_j|^2 - 2 <a_i, b_j>)) over a row-major block.
    // Written as simple element-wise passes over a row buffer so that each pass vectorises.
    let nb = sq_b.len();
    // An empty block sums to 0 (and `chunks_exact(0)` would panic).
    if nb == 0 {
        return 0.0;
    }
    let mut buf = vec![0.0f64; nb];
    let mut total = 0.0f64;
    for (i, row) in gram.chunks_exact(nb).enumerate() {
        let ai = sq_a[i];
        for ((t, &g), &b) in buf.iter_mut().zip(row).zip(sq_b) {
            let d = ai + b - 2.0 * g as f64;
            *t = -gamma * if d > 0.0 { d } else { 0.0 };
        }
        for t in buf.iter_mut() {
            *t = exp_neg_f64(*t);
        }
        let mut acc = [0.0f64; 8];
        let chunks = buf.chunks_exact(8);
        let rest: f64 = chunks.remainder().iter().sum();
        for c in chunks {
            for l in 0..8 {
                acc[l] += c[l];
            }
        }
        total += ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + rest;
    }
    total
}
}

dispatch_avx512_avx2! {
fn best_in_block(block: &[f32], v: &[f32], offered: Option<&[bool]>, start: usize) -> Option<(f64, usize)> {
    // The largest `row . v` over the rows of a row-major block not marked in `offered[start..]`;
    // the lowest index wins ties.
    let d = v.len();
    let mut best: Option<(f64, usize)> = None;
    for (k, row) in block.chunks_exact(d).enumerate() {
        let i = start + k;
        if let Some(m) = offered
            && m[i]
        {
            continue;
        }
        let value = dot_exact(row, v);
        match best {
            Some((b, _)) if value <= b => {}
            _ => best = Some((value, i)),
        }
    }
    best
}
}

/// Exact products (f32 x f32 fits in f64), summed in eight fixed lanes.
#[inline(always)]
fn dot_exact(a: &[f32], b: &[f32]) -> f64 {
    let mut acc = [0.0f64; 8];
    let ca = a.chunks_exact(8);
    let cb = b.chunks_exact(8);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] as f64 * y[l] as f64;
        }
    }
    let mut tail = 0.0f64;
    for (x, y) in ra.iter().zip(rb) {
        tail += *x as f64 * *y as f64;
    }
    ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + tail
}

dispatch_avx512_avx2! {
fn dot_f32_f64(a: &[f32], b: &[f32]) -> f64 {
    dot_exact(a, b)
}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cos_matches_libm() {
        let mut worst = 0.0f64;
        let mut x = -300.0f32;
        while x < 300.0 {
            let err = (cos_f32(x) as f64 - (x as f64).cos()).abs();
            worst = worst.max(err);
            x += 0.000_731;
        }
        assert!(worst < 3e-7, "worst abs error {worst}");
    }

    #[test]
    fn cos_block_matches_scalar() {
        let offset = [0.1f32, 2.0, -3.0];
        let mut xs: Vec<f32> = (0..12).map(|i| i as f32 * 0.7 - 4.0).collect();
        let expect: Vec<f32> = xs.iter().enumerate().map(|(i, &x)| 0.5 * cos_f32(x + offset[i % 3])).collect();
        cos_scale_inplace(&mut xs, &offset, 0.5);
        assert_eq!(xs, expect);
    }

    #[test]
    fn exp_matches_std() {
        let mut x = 0.0f64;
        while x > -708.0 {
            let (got, want) = (exp_neg_f64(x), x.exp());
            let rel = ((got - want) / want).abs();
            assert!(rel < 1e-15, "x={x} got={got} want={want}");
            x -= 0.0137;
        }
        assert_eq!(exp_neg_f64(-708.5), 0.0);
        assert_eq!(exp_neg_f64(-800.0), 0.0);
        assert_eq!(exp_neg_f64(0.0), 1.0);
    }

    #[test]
    fn dot_is_exact_on_integers() {
        let a: Vec<f32> = (0..141).map(|i| i as f32).collect();
        let b: Vec<f32> = (0..141).map(|i| (i % 7) as f32 - 3.0).collect();
        let want: f64 = a.iter().zip(&b).map(|(x, y)| (*x as f64) * (*y as f64)).sum();
        assert_eq!(dot_f32_f64(&a, &b), want);
    }
}
