//! Commitments to h1 hashes: a BLAKE2b-128 digest of each row (the nominations protocol's default
//! commitment, docs/design.md §2–§3).
//!
//! Each digest covers the row's `f32` values in little-endian byte order, so it is the same on every machine
//! (as h1 itself is), and it equals Python's `hashlib.blake2b(row.astype("<f4").tobytes(), digest_size=16)`
//! (BLAKE2b with the output length 16 in its parameter block, RFC 7693). Rows are digested in parallel; the
//! result does not depend on the thread count.

use blake2::Blake2b;
use blake2::digest::Digest;
use blake2::digest::consts::U16;
use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;

use crate::error::{Error, Result, try_filled};

/// Bytes of one digest.
pub const DIGEST_BYTES: usize = 16;

type Blake2b128 = Blake2b<U16>;

/// The BLAKE2b-128 digest of every row of `h` (n × d), as an n × 16 array of bytes.
pub fn row_digests(h: ArrayView2<'_, f32>) -> Result<Array2<u8>> {
    let (n, d) = h.dim();
    let mut out =
        try_filled("hashes", n.checked_mul(DIGEST_BYTES).ok_or_else(|| Error::value("hashes", "too many rows"))?, 0u8)?;
    out.par_chunks_mut(DIGEST_BYTES).enumerate().for_each(|(i, o)| {
        let mut hasher = Blake2b128::new();
        let mut buf = [0u8; 4 * 64];
        let row = h.row(i);
        let mut filled = 0;
        for (j, v) in row.iter().enumerate() {
            buf[filled..filled + 4].copy_from_slice(&v.to_le_bytes());
            filled += 4;
            if filled == buf.len() || j + 1 == d {
                hasher.update(&buf[..filled]);
                filled = 0;
            }
        }
        o.copy_from_slice(&hasher.finalize());
    });
    Array2::from_shape_vec((n, DIGEST_BYTES), out).map_err(|e| Error::value("hashes", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digest_and_thread_independence() {
        // BLAKE2b-128 of the empty row: RFC 7693 parameters with output length 16 (cae6… is hashlib's
        // blake2b(b"", digest_size=16)).
        let empty = Array2::<f32>::zeros((1, 0));
        let got = row_digests(empty.view()).unwrap();
        let want: [u8; 16] =
            [0xca, 0xe6, 0x69, 0x41, 0xd9, 0xef, 0xbd, 0x40, 0x4e, 0x4d, 0x88, 0x75, 0x8e, 0xa6, 0x76, 0x70];
        assert_eq!(got.row(0).to_vec(), want.to_vec());
        let h = Array2::from_shape_fn((300, 77), |(i, j)| ((i * 31 + j * 7) as f32).sin());
        let one =
            rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| row_digests(h.view()).unwrap());
        let three =
            rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap().install(|| row_digests(h.view()).unwrap());
        assert_eq!(one, three);
        let mut changed = h.clone();
        changed[[5, 76]] = f32::from_bits(changed[[5, 76]].to_bits() ^ 1);
        let other = row_digests(changed.view()).unwrap();
        let differ: Vec<usize> = (0..300).filter(|&i| other.row(i) != one.row(i)).collect();
        assert_eq!(differ, vec![5]);
    }
}
