//! A FaaS-style image compression utility on remote memory (the paper's Figure 15): the
//! original images and their compressed forms are arrays at the memory node; a client reads
//! an original with `rread`, compresses it at the compute node, and writes the result back
//! with `rwrite`; [`decompress_one`] reads it back and decodes it (the round trip).
//!
//! Images are 256 x 256 RGB, 8 bits per channel, row-major (`IMAGE_BYTES` = 196,608 bytes).
//! [`synthetic_image`] makes one from a seed: gradients, a few filled shapes and mild noise,
//! so it compresses about as a photo-like picture does (neither all-zero nor
//! random: zlib level 6 takes these to 0.47 of their size, as `clio app image` measured).
//!
//! Layout of an [`ImageStore`] (two allocations of one remote address space):
//!
//! * originals: `count` images back to back, image `i` at `originals + i * IMAGE_BYTES`;
//! * compressed: a table of `count` length words (u64 little-endian; 0 = not compressed yet)
//!   at `compressed + i * 8`, then `count` slots of [`SLOT_BYTES`], slot `i` at
//!   `compressed + count * 8 + i * SLOT_BYTES`, holding the zlib stream of image `i`.
//!
//! [`compress_one`] writes the slot first and the length word after it, so a length seen
//! always names bytes already written by that client. The length word is remote data: a
//! reader checks it against the slot size and the decoder's output against `IMAGE_BYTES`
//! (with a limit, so a hostile stream cannot make it allocate more), and reports a typed
//! [`ImageError`].
//!
//! Codec: zlib (deflate) on the raw pixels with `miniz_oxide`: pure Rust, no C toolchain or
//! system library, maintained under the rust-lang umbrella (it is the backend of `flate2`
//! and of std's backtraces), and it bounds decoding with `decompress_to_vec_zlib_with_limit`.
//! A PNG container would only add headers and per-row filters around the same deflate.

use clio_clib::{Client, ClioError};
use miniz_oxide::deflate::compress_to_vec_zlib;
use miniz_oxide::inflate::decompress_to_vec_zlib_with_limit;
use thiserror::Error;

/// Width and height of an image, pixels.
pub const SIDE: usize = 256;
/// Bytes per pixel (RGB).
pub const CHANNELS: usize = 3;
/// Bytes of one original image.
pub const IMAGE_BYTES: usize = SIDE * SIDE * CHANNELS;
/// Bytes of one compressed slot: zlib's worst case on incompressible input (stored blocks:
/// 5 bytes per 64 KiB block, 2 of header, 4 of checksum) fits with room to spare.
pub const SLOT_BYTES: usize = IMAGE_BYTES + 1024;
/// Bytes of one length word.
const LENGTH_BYTES: u64 = 8;
/// miniz_oxide's compression level (0..=10; 6 is zlib's default trade-off).
pub const LEVEL: u8 = 6;

/// Errors of the image store.
#[derive(Debug, Error)]
pub enum ImageError {
    /// CLib refused or the node answered an error.
    #[error(transparent)]
    Clio(#[from] ClioError),
    /// The index is outside the store.
    #[error("no image {index} (the store holds {count})")]
    NoSuchImage {
        /// The index asked for.
        index: u64,
        /// Images in the store.
        count: u64,
    },
    /// A store needs at least one image and must fit the 48-bit address space.
    #[error("a store of {count} images is not possible")]
    BadCount {
        /// The count asked for.
        count: u64,
    },
    /// An original to upload is not `IMAGE_BYTES` long.
    #[error("an original image is {IMAGE_BYTES} bytes, got {len}")]
    BadImageSize {
        /// Its length.
        len: usize,
    },
    /// The image has no compressed form yet (its length word is 0).
    #[error("image {index} is not compressed yet")]
    NotCompressed {
        /// The image.
        index: u64,
    },
    /// The length word in remote memory is larger than the slot (corrupt or hostile data).
    #[error("image {index}: length word {len} exceeds the slot of {SLOT_BYTES} bytes")]
    BadLength {
        /// The image.
        index: u64,
        /// The length read.
        len: u64,
    },
    /// The compressed bytes do not decode to one image.
    #[error("image {index}: compressed data does not decode to an image: {reason}")]
    Corrupt {
        /// The image.
        index: u64,
        /// What the decoder said.
        reason: String,
    },
    /// The compressed form would not fit its slot (cannot happen with zlib's bound; checked
    /// instead of trusted).
    #[error("image {index}: compressed to {len} bytes, more than the slot")]
    TooLarge {
        /// The image.
        index: u64,
        /// Its compressed length.
        len: usize,
    },
}

/// Where a store's arrays are in remote memory. Plain addresses: another member of the same
/// remote address space (another process, after [`Client::join`]) opens the same store with
/// [`ImageStore::open`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageStore {
    originals: u64,
    compressed: u64,
    count: u64,
}

fn check_count(count: u64) -> Result<(), ImageError> {
    let fits = count
        .checked_mul(SLOT_BYTES as u64 + LENGTH_BYTES)
        .is_some_and(|b| b < 1 << 47);
    if count == 0 || !fits {
        return Err(ImageError::BadCount { count });
    }
    Ok(())
}

impl ImageStore {
    /// Allocate a store of `count` images in `c`'s address space, with every length word 0.
    pub fn create(c: &Client, count: u64) -> Result<ImageStore, ImageError> {
        check_count(count)?;
        let originals = c.ralloc(count * IMAGE_BYTES as u64)?;
        let compressed = c.ralloc(count * (LENGTH_BYTES + SLOT_BYTES as u64))?;
        c.rwrite(compressed, &vec![0u8; (count * LENGTH_BYTES) as usize])?;
        Ok(ImageStore {
            originals,
            compressed,
            count,
        })
    }

    /// The store whose arrays [`ImageStore::create`] placed at these addresses.
    pub fn open(originals: u64, compressed: u64, count: u64) -> Result<ImageStore, ImageError> {
        check_count(count)?;
        Ok(ImageStore {
            originals,
            compressed,
            count,
        })
    }

    /// Address of the originals' array.
    pub fn originals(&self) -> u64 {
        self.originals
    }

    /// Address of the compressed array (its length table first).
    pub fn compressed(&self) -> u64 {
        self.compressed
    }

    /// Images in the store.
    pub fn count(&self) -> u64 {
        self.count
    }

    fn check(&self, index: u64) -> Result<(), ImageError> {
        if index >= self.count {
            return Err(ImageError::NoSuchImage {
                index,
                count: self.count,
            });
        }
        Ok(())
    }

    fn original_at(&self, index: u64) -> u64 {
        self.originals + index * IMAGE_BYTES as u64
    }

    /// Address of image `index`'s length word.
    pub fn length_at(&self, index: u64) -> u64 {
        self.compressed + index * LENGTH_BYTES
    }

    fn slot_at(&self, index: u64) -> u64 {
        self.compressed + self.count * LENGTH_BYTES + index * SLOT_BYTES as u64
    }
}

/// A 256 x 256 RGB image made from `seed`: a diagonal colour gradient, a few filled circles
/// and rectangles, and sensor-like noise (a quarter of the channel values off by one), from a xorshift
/// generator.
pub fn synthetic_image(seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let base = [next() as u8, next() as u8, next() as u8];
    let shapes: Vec<[u64; 5]> = (0..6)
        .map(|_| {
            let r = next();
            [
                r % 256,
                (r >> 8) % 256,
                12 + (r >> 16) % 60,
                r >> 24,
                (r >> 32) % 2,
            ]
        })
        .collect();
    let mut img = Vec::with_capacity(IMAGE_BYTES);
    for y in 0..SIDE as u64 {
        for x in 0..SIDE as u64 {
            let mut px = [
                base[0].wrapping_add((x / 2) as u8),
                base[1].wrapping_add((y / 2) as u8),
                base[2].wrapping_add(((x + y) / 4) as u8),
            ];
            for &[cx, cy, size, colour, square] in &shapes {
                let (dx, dy) = (x.abs_diff(cx), y.abs_diff(cy));
                let inside = if square == 1 {
                    dx <= size && dy <= size
                } else {
                    dx * dx + dy * dy <= size * size
                };
                if inside {
                    px = [colour as u8, (colour >> 8) as u8, (colour >> 16) as u8];
                }
            }
            let noise = next();
            for (k, p) in px.iter_mut().enumerate() {
                *p = match (noise >> (8 * k)) % 8 {
                    0 => p.saturating_sub(1),
                    1 => p.saturating_add(1),
                    _ => *p,
                };
            }
            img.extend_from_slice(&px);
        }
    }
    img
}

/// Write `pixels` (`IMAGE_BYTES`) as original `index` of `store`.
pub fn upload(c: &Client, store: &ImageStore, index: u64, pixels: &[u8]) -> Result<(), ImageError> {
    store.check(index)?;
    if pixels.len() != IMAGE_BYTES {
        return Err(ImageError::BadImageSize { len: pixels.len() });
    }
    c.rwrite(store.original_at(index), pixels)?;
    Ok(())
}

/// Fill every original of `store` with [`synthetic_image`]`(seed + index)`.
pub fn upload_synthetic(c: &Client, store: &ImageStore, seed: u64) -> Result<(), ImageError> {
    for index in 0..store.count {
        upload(c, store, index, &synthetic_image(seed.wrapping_add(index)))?;
    }
    Ok(())
}

/// Read original `index` back.
pub fn read_original(c: &Client, store: &ImageStore, index: u64) -> Result<Vec<u8>, ImageError> {
    store.check(index)?;
    Ok(c.rread(store.original_at(index), IMAGE_BYTES)?)
}

/// The worker: read original `index`, compress it here, write the compressed bytes to its
/// slot and then its length word. Returns the compressed length.
pub fn compress_one(c: &Client, store: &ImageStore, index: u64) -> Result<usize, ImageError> {
    let pixels = read_original(c, store, index)?;
    let packed = compress_to_vec_zlib(&pixels, LEVEL);
    if packed.len() > SLOT_BYTES {
        return Err(ImageError::TooLarge {
            index,
            len: packed.len(),
        });
    }
    c.rwrite(store.slot_at(index), &packed)?;
    c.rwrite(store.length_at(index), &(packed.len() as u64).to_le_bytes())?;
    Ok(packed.len())
}

/// Read image `index`'s length word and compressed bytes and decode them to its pixels.
pub fn decompress_one(c: &Client, store: &ImageStore, index: u64) -> Result<Vec<u8>, ImageError> {
    store.check(index)?;
    let word = c.rread(store.length_at(index), LENGTH_BYTES as usize)?;
    let len = word
        .get(..LENGTH_BYTES as usize)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or(ImageError::Corrupt {
            index,
            reason: format!("length word read as {} bytes", word.len()),
        })?;
    if len == 0 {
        return Err(ImageError::NotCompressed { index });
    }
    if len > SLOT_BYTES as u64 {
        return Err(ImageError::BadLength { index, len });
    }
    let packed = c.rread(store.slot_at(index), len as usize)?;
    let pixels = decompress_to_vec_zlib_with_limit(&packed, IMAGE_BYTES).map_err(|e| {
        ImageError::Corrupt {
            index,
            reason: e.to_string(),
        }
    })?;
    if pixels.len() != IMAGE_BYTES {
        return Err(ImageError::Corrupt {
            index,
            reason: format!("{} bytes decoded, an image is {IMAGE_BYTES}", pixels.len()),
        });
    }
    Ok(pixels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_images_differ_by_seed_and_compress_moderately() {
        let (a, b) = (synthetic_image(1), synthetic_image(2));
        assert_eq!(a.len(), IMAGE_BYTES);
        assert_ne!(a, b);
        assert_eq!(a, synthetic_image(1));
        let packed = compress_to_vec_zlib(&a, LEVEL);
        // Photo-like: compressible, but far from trivially so.
        assert!(packed.len() < IMAGE_BYTES * 3 / 4, "{}", packed.len());
        assert!(packed.len() > IMAGE_BYTES / 20, "{}", packed.len());
    }
}
