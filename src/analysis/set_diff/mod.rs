//! `nixcut diff OLD NEW` (and `check`) of two package sets: every root's closure size
//! before and after, and the packages whose arrival, departure or change of size
//! explains the growth, summed over roots.
//!
//! Each set's graph is one [`ClosureGraph`] over the union of its roots' closures, and
//! every root's closure size is read off [`closure_sizes`] (every path's closure size
//! at once, no walk per root). Roots are matched by package name and output
//! ([`parse_package_name`] without the version); several roots with one key are paired
//! by exact name first, then in name order.
//!
//! Causes. For a package P (a package name: all its versions and outputs) and a root r
//! in both sets, let o and n be the NAR sizes of P's paths in r's old and new closures.
//! P is `added` to r when only n is there, `removed` when only o is, `grown` or
//! `shrunk` when both are and n ≠ o; the cause (P, change) sums n, −o or n − o over its
//! roots. Summed over every cause that is exactly the change of the matched roots'
//! closure sizes. Computed with bitsets of roots: the matched pairs are taken in blocks
//! of `64·W`; for each block and side a search from the block's roots finds the
//! components they reach that lead to a package not proven unchanged ([`unchanged`]),
//! and one pass over those, predecessors first, ORs each component's set of block roots
//! into its successors; then each package with a reached path gets the OR of its
//! reached paths' sets on each side, and `added`/`removed` bytes are sizes times
//! popcounts. A block costs what its roots reach (O((reached + their edges)·W) words),
//! never the whole graph: N roots over one shared library cost O(N), where a pass over
//! every component per block cost O(N²/1024). Only a package present on both sides in
//! a root with several paths, whose paths do not pair up by name, size and reaching
//! roots, is summed root by root. Blocks run in parallel (rayon); memory per worker: a
//! position per component and W words per reached component per side.
//!
//! Roots in one set only are not matched and make no cause; they are summed apart
//! (`total.added`, `total.removed`), and `total.all_roots` sums every root of each
//! set, which is what `check --max-total-growth` gates. Roots and causes are ranked
//! by the size of their change, whatever its sign.
//!
//! The mass rebuild (paths with a new hash and the same name) is counted, not listed:
//! rebuilt paths of unchanged size change no root's size and make no cause.
//!
//! This file holds [`set_diff`], the steps in order; `input.rs` the inputs, the options
//! and the shapes the steps share;
//! `side.rs` one side's graph and the matching of roots, `unchanged.rs` the packages
//! and those proven to change nothing, `causes.rs` the bitset pass, `rows.rs` the
//! report's rows and range checks.

use crate::report::{SetDiffReport, SetRest, SetTotal, SCHEMA_VERSION};

use super::AnalysisError;

mod causes;
mod input;
mod rows;
mod side;
#[cfg(test)]
mod tests;
mod unchanged;

use causes::{cause_sums, CHANGES};
pub use input::{SetDiffOptions, SetInput, SetLimits};
use rows::{
    cause_rows, kept_by_top, percent, ranked_causes, rebuild_summary, root_rows, set_check,
    set_side, set_warnings, Ranges, I64_LIMIT,
};
use side::{key_name, match_roots, Side};
use unchanged::{packages, unchanged};

/// Diff two package sets (see the module docs).
pub fn set_diff(
    old_in: SetInput<'_>,
    new_in: SetInput<'_>,
    opts: &SetDiffOptions,
) -> Result<SetDiffReport, AnalysisError> {
    let (mut old, mut new) = rayon::join(
        || Side::new(old_in.graph, old_in.roots, old_in.attrs, &opts.timings),
        || Side::new(new_in.graph, new_in.roots, new_in.attrs, &opts.timings),
    );
    opts.timings.step("set diff: graphs and closure sizes");
    // Every size of one side (a closure, a root's change, a package's bytes in one
    // closure) is a sum over part of its union: when the union fits the i64 range, none
    // of them leaves it. Only sums over several roots are checked one by one below.
    for (s, origin) in [(&old, old_in.origin), (&new, new_in.origin)] {
        let union: u128 = s.g.nar_sizes.iter().map(|b| u128::from(b.get())).sum();
        if i64::try_from(union).is_err() {
            let r = Ranges {
                old: &old,
                new: &new,
                old_origin: old_in.origin,
                new_origin: new_in.origin,
            };
            return Err(r.error(
                format!("the NAR sizes of the closures of `{origin}`"),
                union as i128,
                I64_LIMIT,
            ));
        }
    }
    let (pairs, only_old, only_new) = match_roots(&old, &new);
    opts.timings.step("set diff: roots matched");
    let mut pk = packages(&mut old, &mut new);
    opts.timings.step("set diff: packages");
    pk.skip = unchanged(&old, &new, &pk, &pairs);
    opts.timings.step("set diff: packages that change nothing");
    let (old, new) = (&old, &new);
    let ranges = Ranges {
        old,
        new,
        old_origin: old_in.origin,
        new_origin: new_in.origin,
    };
    let (acc, _work) = cause_sums(old, new, &pk, &pairs);
    opts.timings.step("set diff: causes");
    let pair_name: Vec<String> = pairs.iter().map(|p| key_name(&p.2)).collect();
    // Totals first: a root total out of range is the plainer message.
    let rr = root_rows(
        (old, new),
        &ranges,
        &pairs,
        (&only_old, &only_new),
        (opts.top, opts.changed_only),
    )?;
    let found = ranked_causes(acc, &pk);
    for (p, k, a) in &found {
        ranges.signed(a.bytes, || {
            format!(
                "the bytes of the cause `{}` ({}) over its {} roots",
                pk.names[*p],
                CHANGES[*k].as_str(),
                a.roots
            )
        })?;
    }
    let cause_total: i128 = found.iter().map(|c| c.2.bytes).sum();
    let keep = kept_by_top(&found, opts.top);
    let causes = cause_rows(old, new, &pk, &pairs, &pair_name, &found, &keep);
    let shown_bytes: i128 = causes.iter().map(|c| c.bytes as i128).sum();
    let causes_hidden = found.len() - causes.len();
    let total_delta = rr.total_delta;
    let hidden_causes_bytes = ranges.signed(cause_total - shown_bytes, || {
        format!("the bytes of the {causes_hidden} causes not listed")
    })?;
    debug_assert_eq!(
        cause_total, total_delta as i128,
        "causes must add up to the total"
    );
    let rebuild = rebuild_summary(old, new, rr.rebuilt_same);
    let check = opts.check.map(|limits| {
        set_check(
            limits,
            (old, new),
            &pk,
            (&pairs, &pair_name, &only_new),
            &rr,
            opts.show,
        )
    });
    Ok(SetDiffReport {
        schema_version: SCHEMA_VERSION,
        old: set_side(old, old_in.origin),
        new: set_side(new, new_in.origin),
        total: SetTotal {
            roots: pairs.len(),
            old: rr.total_old,
            new: rr.total_new,
            delta: total_delta,
            percent: percent(rr.total_old, total_delta),
            download_old: rr.download_old,
            download_new: rr.download_new,
            added: rr.added,
            removed: rr.removed,
            all_roots: rr.all_roots,
        },
        counts: rr.counts,
        roots: rr.roots,
        causes,
        rebuild,
        rest: (rr.hidden_roots > 0 || causes_hidden > 0).then_some(SetRest {
            roots: rr.hidden_roots,
            roots_delta: rr.hidden_delta,
            causes: causes_hidden,
            causes_bytes: hidden_causes_bytes,
        }),
        check,
        warnings: set_warnings(old, new),
        changed_only: opts.changed_only,
        show: opts.show,
    })
}
