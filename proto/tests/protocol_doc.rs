//! docs/protocol.md must describe the header the code defines: parse its header table and
//! compare every row with `clio_proto::header::field`.

use clio_proto::header::{field, HEADER_LEN};

#[test]
fn header_table_matches_the_code() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.md"))
        .unwrap();
    let expected: &[(&str, usize, usize)] = &[
        ("version", field::VERSION, 1),
        ("opcode", field::OPCODE, 1),
        ("status", field::STATUS, 1),
        ("flags", field::FLAGS, 1),
        ("pid", field::PID.start, field::PID.len()),
        ("pkt_index", field::PKT_INDEX.start, field::PKT_INDEX.len()),
        ("pkt_count", field::PKT_COUNT.start, field::PKT_COUNT.len()),
        (
            "payload_len",
            field::PAYLOAD_LEN.start,
            field::PAYLOAD_LEN.len(),
        ),
        ("req_id", field::REQ_ID.start, field::REQ_ID.len()),
        ("va", field::VA.start, field::VA.len()),
        ("total_len", field::TOTAL_LEN.start, field::TOTAL_LEN.len()),
        ("checksum", field::CHECKSUM.start, field::CHECKSUM.len()),
        ("arg0", field::ARG0.start, field::ARG0.len()),
        ("arg1", field::ARG1.start, field::ARG1.len()),
        ("key", field::KEY.start, field::KEY.len()),
        ("client", field::CLIENT.start, field::CLIENT.len()),
        ("epoch", field::EPOCH.start, field::EPOCH.len()),
        ("cookie", field::COOKIE.start, field::COOKIE.len()),
    ];
    let mut covered = 0;
    for (name, off, len) in expected {
        let row = doc
            .lines()
            .find(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                cells.len() > 3 && cells[3] == *name && cells[1].parse::<usize>().is_ok()
            })
            .unwrap_or_else(|| panic!("docs/protocol.md has no header row for {name}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[1].parse::<usize>().unwrap(), *off, "offset of {name}");
        assert_eq!(cells[2].parse::<usize>().unwrap(), *len, "length of {name}");
        covered += len;
    }
    assert_eq!(covered, HEADER_LEN, "the table covers the whole header");
}
