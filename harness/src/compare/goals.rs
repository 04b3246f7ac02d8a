//! The goals table: the targets of the benchmarks issue against what this
//! run measured.

use super::lookups::BigPeer;
use super::threads::rate;
use super::Row;
use crate::memlimit::Limit;
use crate::report::{f2, mib, millions, Table};

/// The goals for `rows` (the head-to-head size) and, on a full run, `b`
/// (`concurrent-cuckoo` on the 1 GiB class) and `big_peers`.
pub fn render(rows: &[Row], b: Option<&Row>, big_peers: &[BigPeer], limit: &Limit) -> String {
    let find = |name: &str| rows.iter().find(|r| r.name == name);
    let frac = |ns: f64| f2(limit.lookup_ns() / ns);
    let mut t = Table::new(&["goal", "target", "achieved"]);
    if let Some(o) = find("concurrent-cuckoo") {
        for peer in ["cuckoofilter", "atomic-cuckoo-filter"] {
            if let Some(p) = find(peer) {
                let same = format!(
                    "{}x `contains`, {}x `contains_hash`",
                    f2(p.lookups.contains[0] / o.lookups.contains[0]),
                    f2(p.lookups.contains[0] / o.hash.as_ref().map_or(f64::NAN, |h| h.contains[0])),
                );
                let vs_big = b.map_or(String::new(), |b| {
                    format!(
                        "; ours on the {} table against theirs at {} items: {}x / {}x",
                        mib(b.bytes),
                        millions(p.n),
                        f2(p.lookups.contains[0] / b.lookups.contains[0]),
                        f2(p.lookups.contains[0]
                            / b.hash.as_ref().map_or(f64::NAN, |h| h.contains[0]))
                    )
                });
                let on_big = big_peers.iter().find(|bp| bp.name == peer).and_then(|bp| {
                    b.map(|b| {
                        format!(
                            "**{}x `contains`, {}x `contains_hash`** on tables sized for {} items (ours {}, theirs {})",
                            f2(bp.ns / b.lookups.contains[0]),
                            f2(bp.ns / b.hash.as_ref().map_or(f64::NAN, |h| h.contains[0])),
                            millions(b.n),
                            mib(b.bytes),
                            mib(bp.bytes)
                        )
                    })
                });
                let text = match on_big {
                    Some(big) => format!("{big}; at {} items, 90% load: {same}", millions(o.n)),
                    None => format!("{same} (both at {} items){vs_big}", millions(o.n)),
                };
                t.row(vec![
                    format!("single negative `contains` vs {peer}"),
                    ">= 3x".into(),
                    text,
                ]);
            }
        }
        let r = b.unwrap_or(o);
        if let (Some(h), Some(kb)) = (&r.hash, r.lookups.batch) {
            t.row(vec![
                format!("`contains_batch` vs the two-line limit ({} table)", mib(r.bytes)),
                ">= 0.77".into(),
                format!(
                    "`contains_hash_batch`: {} / {} / {}; keyed `contains_batch`: {} / {} / {} (bursts 16/32/64)",
                    frac(h.batch[0]), frac(h.batch[1]), frac(h.batch[2]), frac(kb[0]), frac(kb[1]), frac(kb[2])
                ),
            ]);
        }
        for (peer, target) in [("atomic-cuckoo-filter", ">= 2x"), ("cuckoofilter", ">= 5x")] {
            if let (Some(a), Some(p)) = (
                rate(&o.threaded, "90/5/5", 2),
                find(peer).and_then(|p| rate(&p.threaded, "90/5/5", 2)),
            ) {
                t.row(vec![
                    format!(
                        "90/5/5, 2 threads, vs {peer}{}",
                        if peer == "cuckoofilter" {
                            " in a Mutex"
                        } else {
                            ""
                        }
                    ),
                    target.into(),
                    format!(
                        "{}x wall clock ({}x by CPU time)",
                        f2(a.0 / p.0),
                        f2(a.1 / p.1)
                    ),
                ]);
            }
        }
        for r in b.into_iter().chain(Some(o)) {
            if let (Some(two), Some(one)) = (
                rate(&r.threaded, "read-only", 2),
                rate(&r.threaded, "read-only", 1),
            ) {
                t.row(vec![
                    format!("read-only, 2 threads / 1 thread ({} table)", mib(r.bytes)),
                    ">= 1.9x".into(),
                    format!(
                        "{}x wall clock ({}x by CPU time)",
                        f2(two.0 / one.0),
                        f2(two.1 / one.1)
                    ),
                ]);
            }
        }
    }
    format!("\n### Goals\n\n{}", t.render())
}
