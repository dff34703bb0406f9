//! The one source of randomness for privacy noise: ChaCha20 (RFC 8439 core, via `rand_chacha`).
//!
//! * [`Csprng::from_os`] seeds a 256-bit key from the operating system (`getrandom`). This is the
//!   default everywhere and the only mode whose output may be called private.
//! * [`Csprng::from_seed_u64`] / [`Csprng::from_seed_bytes`] give a reproducible stream for tests and
//!   experiments. **A seeded generator is not private**: anyone who knows the seed can subtract the noise.
//! * [`Csprng::derive`] gives an independent child stream (for a party, a thread or a round), so that
//!   parallel work draws the same numbers whatever the thread count.
//!
//! Public, shared randomness (the h1 projection) does not use this type's OS mode: it is derived from a
//! public seed with [`public_key_from_str`] / [`public_key_from_u64`] so that every party computes the same ω, b.

use rand_chacha::ChaCha20Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// SplitMix64's output for the stream position `seed + (i+1)·γ` (Steele, Lea & Flood 2014): a public,
/// counter-based stream for choices that need no secrecy (the owners' Gumbel draws in
/// [`crate::nominate`], the stochastic greedy's samples in [`crate::greedy`]). Never privacy noise.
#[inline(always)]
pub fn splitmix64(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add((i.wrapping_add(1)).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A ChaCha20 stream. See the module documentation for which constructor is private.
#[derive(Clone, Debug)]
pub struct Csprng {
    inner: ChaCha20Rng,
    seeded: bool,
    /// The process that keyed an unseeded stream: after `fork` the child sees another id and re-keys.
    pid: u32,
}

impl Csprng {
    /// A generator keyed with 256 bits of operating-system entropy.
    pub fn from_os() -> Result<Self> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| Error::Entropy(e.to_string()))?;
        Ok(Csprng { inner: ChaCha20Rng::from_seed(key), seeded: false, pid: std::process::id() })
    }

    /// Re-key an unseeded stream from the operating system when the process id differs from the one
    /// that keyed it (the process was forked: parent and child would otherwise draw the same noise).
    /// Returns whether it re-keyed. Seeded streams are reproducible by design and never re-keyed.
    pub fn rekey_if_forked(&mut self) -> Result<bool> {
        if self.seeded || self.pid == std::process::id() {
            return Ok(false);
        }
        *self = Csprng::from_os()?;
        Ok(true)
    }

    /// A reproducible generator for tests and experiments (NOT private). The key is
    /// `SHA-256("dpsumm/csprng/v1/u64" || seed as 8 little-endian bytes)`, identical on every machine.
    pub fn from_seed_u64(seed: u64) -> Self {
        let key = domain_key(b"dpsumm/csprng/v1/u64", &seed.to_le_bytes());
        Csprng { inner: ChaCha20Rng::from_seed(key), seeded: true, pid: 0 }
    }

    /// A reproducible generator keyed directly with 32 bytes (NOT private unless the bytes are secret
    /// and uniformly random).
    pub fn from_seed_bytes(key: [u8; 32]) -> Self {
        Csprng { inner: ChaCha20Rng::from_seed(key), seeded: true, pid: 0 }
    }

    /// Whether this stream came from a user-supplied seed (and is therefore not private).
    pub fn is_seeded(&self) -> bool {
        self.seeded
    }

    /// An independent child stream. A seeded parent gives a child that depends only on the parent's key,
    /// its position and `label`; an OS-seeded parent gives an unpredictable child.
    pub fn derive(&mut self, label: &[u8]) -> Csprng {
        let mut material = [0u8; 32];
        self.inner.fill_bytes(&mut material);
        let key = domain_key(&material, label);
        Csprng { inner: ChaCha20Rng::from_seed(key), seeded: self.seeded, pid: self.pid }
    }

    /// 64 uniformly random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// 32 uniformly random bits.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        self.inner.next_u32()
    }

    /// Fill `dst` with uniformly random bytes.
    pub fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.inner.fill_bytes(dst)
    }

    /// A uniform float on the grid `{k / 2^53 : 0 <= k < 2^53}`, i.e. in `[0, 1)`.
    /// Fine for public or non-privacy randomness (rounding, sampling data); privacy noise uses the exact
    /// integer samplers in `noise`.
    #[inline]
    pub fn uniform_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in `[0, n)` without modulo bias (Lemire's method with rejection). `n > 0`.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let threshold = n.wrapping_neg() % n;
        loop {
            let x = self.next_u64();
            let m = (x as u128) * (n as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// A standard normal deviate by Box–Muller with `libm`'s portable `log`, `sqrt`, `cos`, so that a
    /// seeded stream gives bit-identical values on every platform. Not for privacy noise.
    pub fn standard_normal(&mut self) -> f64 {
        // u1 in (0, 1] so that ln(u1) is finite.
        let u1 = ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
        let u2 = self.uniform_f64();
        libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2)
    }
}

/// `SHA-256(domain || 0x00 || data)`.
pub fn domain_key(domain: &[u8], data: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(domain);
    h.update([0u8]);
    h.update(data);
    h.finalize().into()
}

/// The key of a public stream named by a string the parties agree on.
pub fn public_key_from_str(purpose: &str, seed: &str) -> [u8; 32] {
    domain_key(format!("dpsumm/public/v1/{purpose}/str").as_bytes(), seed.as_bytes())
}

/// The key of a public stream named by an integer the parties agree on.
pub fn public_key_from_u64(purpose: &str, seed: u64) -> [u8; 32] {
    domain_key(format!("dpsumm/public/v1/{purpose}/u64").as_bytes(), &seed.to_le_bytes())
}

impl Csprng {
    /// A uniform integer in `[0, n)` for a 128-bit bound (rejection sampling, no bias). `n > 0`.
    pub fn below_u128(&mut self, n: u128) -> u128 {
        debug_assert!(n > 0);
        if n <= u64::MAX as u128 {
            return self.below(n as u64) as u128;
        }
        // Rejection from the smallest power of two >= n.
        let bits = 128 - (n - 1).leading_zeros();
        let mask = if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 };
        loop {
            let x = (((self.next_u64() as u128) << 64) | self.next_u64() as u128) & mask;
            if x < n {
                return x;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_streams_repeat_and_differ() {
        let mut a = Csprng::from_seed_u64(7);
        let mut b = Csprng::from_seed_u64(7);
        let mut c = Csprng::from_seed_u64(8);
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        assert!(a.is_seeded());
        assert!(!Csprng::from_os().unwrap().is_seeded());
    }

    #[test]
    fn rekey_only_when_the_pid_changed() {
        let mut a = Csprng::from_os().unwrap();
        let before = a.clone();
        assert!(!a.rekey_if_forked().unwrap());
        a.pid = a.pid.wrapping_add(1); // as a forked child would see it
        assert!(a.rekey_if_forked().unwrap());
        assert_ne!(a.clone().next_u64(), before.clone().next_u64());
        let mut s = Csprng::from_seed_u64(3);
        s.pid = 12345;
        assert!(!s.rekey_if_forked().unwrap());
    }

    #[test]
    fn os_streams_differ() {
        let mut a = Csprng::from_os().unwrap();
        let mut b = Csprng::from_os().unwrap();
        assert_ne!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn chacha20_matches_rfc8439_keystream() {
        // RFC 8439 §2.3.2 uses nonce 000000090000004a00000000 and counter 1; rand_chacha uses a zero nonce
        // and counter 0, so check against the all-zero-key test vector of RFC 7539 A.1 #1 instead.
        let mut r = Csprng::from_seed_bytes([0u8; 32]);
        let mut out = [0u8; 16];
        r.fill_bytes(&mut out);
        assert_eq!(
            out,
            [0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a, 0xe5, 0x53, 0x86, 0xbd, 0x28]
        );
    }

    #[test]
    fn below_is_uniform() {
        // chi-square on 6 cells, 60_000 draws, critical value 20.52 at alpha = 0.001 (5 dof).
        let mut r = Csprng::from_seed_u64(1);
        let mut counts = [0u64; 6];
        for _ in 0..60_000 {
            counts[r.below(6) as usize] += 1;
        }
        let chi2: f64 = counts.iter().map(|&c| (c as f64 - 10_000.0).powi(2) / 10_000.0).sum();
        assert!(chi2 < 20.52, "chi2 = {chi2}, counts = {counts:?}");
    }

    #[test]
    fn normal_moments() {
        let mut r = Csprng::from_seed_u64(2);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| r.standard_normal()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        // 5-sigma bounds: sd(mean) = 1/sqrt(n) = 0.0022, sd(var) = sqrt(2/n) = 0.0032.
        assert!(mean.abs() < 0.0112, "mean {mean}");
        assert!((var - 1.0).abs() < 0.016, "var {var}");
    }
}
