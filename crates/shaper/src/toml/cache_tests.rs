//! The cache of records against reading afresh: a file read with the
//! cache its previous version left gives exactly what the `toml`
//! crate's reading gives (plan, places and problems alike), whatever
//! the edit between them: records changed, put in, taken out, moved,
//! lines with a problem put in.

use super::cache::Cache;
use super::fast_tests::{odd, pick, table, valid, ODD};
use super::{read_by_crate, read_cached, LibreqosFiles, SPLIT_FROM};
use crate::plan::Plan;
use proptest::prelude::*;
use std::sync::Arc;

type Outcome = (Plan, Vec<String>, Option<LibreqosFiles>);

/// `text` read with `records`, cut as `cut` says.
fn cached(text: &str, records: &mut Cache, cut: (usize, usize)) -> Outcome {
    let file: Arc<str> = Arc::from("s.toml");
    let (mut plan, mut errors) = (Plan::default(), Vec::new());
    let files = read_cached(&file, text, &mut plan, &mut errors, cut, records);
    let errors = errors.iter().map(ToString::to_string).collect();
    (plan, errors, files)
}

fn by_crate(text: &str) -> Outcome {
    let file: Arc<str> = Arc::from("s.toml");
    let (mut plan, mut errors) = (Plan::default(), Vec::new());
    let files = read_by_crate(&file, text, &mut plan, &mut errors);
    let errors = errors.iter().map(ToString::to_string).collect();
    (plan, errors, files)
}

/// The file's pieces: cut where a line starts with `[`.
fn pieces(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for line in text.split_inclusive('\n') {
        if line.starts_with('[') {
            out.push(String::new());
        }
        if let Some(last) = out.last_mut() {
            last.push_str(line);
        }
    }
    out
}

/// An edit of a file's pieces.
#[derive(Clone, Debug)]
enum Edit {
    /// A piece replaced by a new table.
    Change(prop::sample::Index, String),
    /// A new table put before a piece.
    Insert(prop::sample::Index, String),
    Delete(prop::sample::Index),
    /// A piece moved elsewhere.
    Move(prop::sample::Index, prop::sample::Index),
    /// A line put into a piece, after its first line.
    Odd(prop::sample::Index, &'static str),
}

fn edit() -> impl Strategy<Value = Edit> {
    let at = any::<prop::sample::Index>;
    let new_table = || (0usize..3, 0u32..6).prop_flat_map(|(k, i)| table(k, i));
    prop_oneof![
        (at(), new_table()).prop_map(|(a, t)| Edit::Change(a, t)),
        (at(), new_table()).prop_map(|(a, t)| Edit::Insert(a, t)),
        at().prop_map(Edit::Delete),
        (at(), at()).prop_map(|(a, b)| Edit::Move(a, b)),
        (at(), pick(ODD)).prop_map(|(a, l)| Edit::Odd(a, l)),
    ]
}

/// `text` with `edits` made, piece by piece (a piece is kept whole but
/// for an odd line, so that most records are found in the cache).
fn edited(text: &str, edits: &[Edit]) -> String {
    let mut p = pieces(text);
    for e in edits {
        let n = p.len();
        match e {
            Edit::Change(a, t) if n > 0 => p[a.index(n)] = t.clone(),
            Edit::Insert(a, t) => p.insert(a.index(n + 1), t.clone()),
            Edit::Delete(a) if n > 0 => {
                p.remove(a.index(n));
            }
            Edit::Move(a, b) if n > 0 => {
                let x = p.remove(a.index(n));
                p.insert(b.index(n), x);
            }
            Edit::Odd(a, l) if n > 0 => {
                let piece = &mut p[a.index(n)];
                let at = piece.find('\n').map_or(piece.len(), |i| i + 1);
                piece.insert_str(at, &format!("{l}\n"));
            }
            _ => {}
        }
    }
    // A table's text may lack a line end at the end of a file.
    p.iter_mut().for_each(|s| {
        if !s.is_empty() && !s.ends_with('\n') {
            s.push('\n');
        }
    });
    p.concat()
}

/// The cuts a read can make: whole; in two, the halves whole; in two,
/// each half cut at every header line.
const CUTS: [(usize, usize); 3] = [(SPLIT_FROM, super::fast::BLOCK), (0, usize::MAX), (0, 1)];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_file_read_with_the_cache_reads_as_the_crate_reads_it(
        before in prop_oneof![3 => valid(), 1 => odd()],
        edits in proptest::collection::vec(edit(), 0..4),
        cut in pick(&CUTS),
    ) {
        let after = edited(&before, &edits);
        let mut records = Cache::default();
        prop_assert_eq!(cached(&before, &mut records, cut), by_crate(&before), "before: {}", before);
        prop_assert_eq!(cached(&after, &mut records, cut), by_crate(&after), "before:\n{}\nafter:\n{}", before, after);
        // And once more, the cache now the edited file's (or still the
        // first's, if the fast reader did not read the edited one).
        prop_assert_eq!(cached(&before, &mut records, cut), by_crate(&before), "back: {}", before);
    }
}

/// Records of a bench-like file, numbered from `from`.
fn circuits(from: u32, n: u32) -> String {
    (from..from + n)
        .map(|i| {
            format!(
                "[[circuit]]\nid = \"c{i}\"\nrate = {{ download = \"10mbit\", upload = \"2mbit\" }}\n\
                 reservation = \"1mbit\"\n\n[[device]]\nid = \"d{i}\"\ncircuit = \"c{i}\"\n\
                 ipv4 = [\"10.0.{}.{}\"]\nmac = \"zz\"\n\n",
                i / 200,
                i % 200 + 1
            )
        })
        .collect()
}

#[test]
fn records_moved_by_an_edit_are_found_and_placed_where_they_now_are() {
    // Valid but for the MACs, which the conversion refuses with their
    // places: a record found in the cache must give its new line.
    let before = format!(
        "[interfaces]\ninternet = \"a\"\nsubscribers = \"b\"\nrate = \"1gbit\"\n\n{}",
        circuits(0, 30)
    );
    let after = format!(
        "[interfaces]\ninternet = \"a\"\nsubscribers = \"b\"\nrate = \"1gbit\"\n\n{}{}",
        circuits(100, 3),
        circuits(0, 30)
    );
    for cut in CUTS {
        let mut records = Cache::default();
        let _ = cached(
            &before.replace("zz", "02:00:00:00:00:01"),
            &mut records,
            cut,
        );
        assert_eq!(records.len(), 60, "{cut:?}");
        // The MACs make the file one the crate reads: the cache is kept.
        let _ = cached(&before, &mut records, cut);
        assert_eq!(records.len(), 60);
        let fine = after.replace("zz", "02:00:00:00:00:01");
        let with_cache = cached(&fine, &mut records, cut);
        assert_eq!(records.len(), 66);
        assert_eq!(with_cache, by_crate(&fine), "{cut:?}");
        // d0, now after three new records of eleven lines: its id line.
        let moved = &with_cache.0.devices[3];
        assert_eq!(moved.id, "d0");
        assert_eq!(moved.at.line, Some(6 + 3 * 11 + 6), "{:?}", moved.at);
    }
}

#[test]
fn a_record_changed_in_place_is_not_taken_for_the_one_it_replaced() {
    // The changed record is where the cache looks first (after the one
    // found before it), its text as long as the old one's: only a
    // comparison of the whole text tells them apart.
    let before = circuits(0, 20).replace("zz", "02:00:00:00:00:01");
    let (old, new) = (
        "id = \"c5\"\nrate = { download = \"10",
        "id = \"c5\"\nrate = { download = \"20",
    );
    let after = before.replacen(old, new, 1);
    assert_ne!(before, after);
    for cut in CUTS {
        let mut records = Cache::default();
        let _ = cached(&before, &mut records, cut);
        assert_eq!(records.len(), 40, "{cut:?}");
        let with_cache = cached(&after, &mut records, cut);
        assert_eq!(with_cache, by_crate(&after), "{cut:?}");
        assert_eq!(with_cache.0.circuits[5].rates.download.max, 20_000_000);
        // And back: the old record is a new one again.
        assert_eq!(cached(&before, &mut records, cut), by_crate(&before));
    }
}
