//! The image compression utility over a model node: several clients (threads, each its own
//! member of one remote address space, joined with its credentials) compress all images;
//! each decodes back to exactly its original; hostile length words and compressed bytes in
//! remote memory give typed errors.

use clio_apps::image::{
    compress_one, decompress_one, read_original, synthetic_image, upload_synthetic, ImageError,
    ImageStore, IMAGE_BYTES, SLOT_BYTES,
};
use clio_clib::transport::InProcTransport;
use clio_clib::{Client, Config};
use clio_proto::frame::Route;
use clio_sim::{BoardConfig, CBoard};
use std::sync::{Arc, Mutex};

type Board = Arc<Mutex<CBoard>>;

fn board() -> Board {
    Arc::new(Mutex::new(
        CBoard::new(&BoardConfig {
            dram_bytes: 256 << 20,
            page_shift: 16,
            ring_entries: 256,
            ..BoardConfig::default()
        })
        .unwrap(),
    ))
}

fn transport(b: &Board) -> Box<InProcTransport> {
    let b = b.clone();
    Box::new(InProcTransport::direct(move |p| {
        let mut out = Vec::new();
        let mut g = b.lock().unwrap();
        g.handle(&Route::default(), p, &mut out);
        g.service(&mut out);
        out.into_iter().map(|(_, p)| p).collect()
    }))
}

const SEED: u64 = 77;

/// A model node, its first member, and a store of `count` synthetic originals.
fn uploaded_store(count: u64) -> (Board, Client, ImageStore) {
    let b = board();
    let c = Client::connect(transport(&b), Config::default()).unwrap();
    let store = ImageStore::create(&c, count).unwrap();
    upload_synthetic(&c, &store, SEED).unwrap();
    (b, c, store)
}

#[test]
fn several_clients_compress_every_image_and_each_decodes_to_its_original() {
    let (b, owner, store) = uploaded_store(12);
    assert!(matches!(
        decompress_one(&owner, &store, 0),
        Err(ImageError::NotCompressed { index: 0 })
    ));
    let creds = owner.credentials();
    let clients = 3u64;
    let workers: Vec<_> = (0..clients)
        .map(|k| {
            let b = b.clone();
            std::thread::spawn(move || {
                let c = Client::join(transport(&b), Config::default(), creds).unwrap();
                // The same arrays, found by address in the joined address space.
                let store =
                    ImageStore::open(store.originals(), store.compressed(), store.count()).unwrap();
                let mut bytes = 0;
                for index in (k..store.count()).step_by(clients as usize) {
                    bytes += compress_one(&c, &store, index).unwrap();
                }
                bytes
            })
        })
        .collect();
    let compressed: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
    let original = store.count() as usize * IMAGE_BYTES;
    assert!(
        compressed < original,
        "{compressed} compressed bytes of {original}"
    );
    for index in 0..store.count() {
        let decoded = decompress_one(&owner, &store, index).unwrap();
        assert_eq!(decoded, synthetic_image(SEED + index), "image {index}");
        assert_eq!(decoded, read_original(&owner, &store, index).unwrap());
    }
    assert!(matches!(
        compress_one(&owner, &store, store.count()),
        Err(ImageError::NoSuchImage { .. })
    ));
}

#[test]
fn hostile_lengths_and_bytes_in_remote_memory_give_typed_errors() {
    let (_b, c, store) = uploaded_store(2);
    compress_one(&c, &store, 0).unwrap();
    compress_one(&c, &store, 1).unwrap();

    // A length beyond the slot.
    for len in [SLOT_BYTES as u64 + 1, u64::MAX] {
        c.rwrite(store.length_at(0), &len.to_le_bytes()).unwrap();
        match decompress_one(&c, &store, 0) {
            Err(ImageError::BadLength { index: 0, len: l }) => assert_eq!(l, len),
            other => panic!("length {len}: {other:?}"),
        }
    }
    // A length inside the slot that cuts the stream short.
    c.rwrite(store.length_at(0), &7u64.to_le_bytes()).unwrap();
    assert!(matches!(
        decompress_one(&c, &store, 0),
        Err(ImageError::Corrupt { index: 0, .. })
    ));
    // Garbage in the slot under a plausible length.
    c.rwrite(store.length_at(1), &4096u64.to_le_bytes())
        .unwrap();
    let slot1 = store.length_at(0) + store.count() * 8 + SLOT_BYTES as u64;
    c.rwrite(slot1, &[0xA5; 4096]).unwrap();
    assert!(matches!(
        decompress_one(&c, &store, 1),
        Err(ImageError::Corrupt { index: 1, .. })
    ));
    // Compressing again repairs it.
    compress_one(&c, &store, 0).unwrap();
    assert_eq!(
        decompress_one(&c, &store, 0).unwrap(),
        synthetic_image(SEED)
    );
}

#[test]
fn a_decompression_bomb_is_cut_at_one_image() {
    let b = board();
    let c = Client::connect(transport(&b), Config::default()).unwrap();
    let store = ImageStore::create(&c, 1).unwrap();
    // A valid zlib stream of twice an image of zeros: small, but decodes too long.
    let bomb = miniz_oxide::deflate::compress_to_vec_zlib(&vec![0u8; 2 * IMAGE_BYTES], 6);
    let slot0 = store.length_at(0) + store.count() * 8;
    c.rwrite(slot0, &bomb).unwrap();
    c.rwrite(store.length_at(0), &(bomb.len() as u64).to_le_bytes())
        .unwrap();
    assert!(matches!(
        decompress_one(&c, &store, 0),
        Err(ImageError::Corrupt { index: 0, .. })
    ));
}
