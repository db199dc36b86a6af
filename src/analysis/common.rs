//! Helpers every analysis shares: choosing the roots of a loaded closure, building its
//! graph, the loader's warnings a report carries, and where the input came from.

use crate::graph::ClosureGraph;
use crate::report::SourceRef;
use crate::store::{Closure, LoadWarning, StorePath};

use super::AnalysisError;

/// Where the closure came from, for the report header.
pub(crate) fn source_ref(c: &Closure) -> SourceRef {
    SourceRef {
        kind: c.source,
        origin: c.origin.clone(),
    }
}

/// Pick the roots: `--root` if given, else the closure's roots.
pub(crate) fn pick_roots(c: &Closure, root: Option<&str>) -> Result<Vec<StorePath>, AnalysisError> {
    match root {
        Some(q) => Ok(vec![c.select_root(q)?]),
        None => {
            let roots = c.roots();
            if roots.is_empty() {
                if c.paths.is_empty() {
                    return Err(crate::store::RootSelectionError::Empty {
                        origin: c.origin.clone(),
                    }
                    .into());
                }
                return Err(AnalysisError::NoRoot {
                    origin: c.origin.clone(),
                });
            }
            Ok(roots)
        }
    }
}

/// The graph of the closure of `--root`, or of every root. Without `--root` and
/// declared roots the graph finds the roots itself (paths nothing references), which
/// saves a pass over every reference. Public for `browse`, which draws the graph `why`
/// ranks.
pub fn graph_for(
    c: &Closure,
    root: Option<&str>,
    timings: &crate::timing::Timings,
) -> Result<ClosureGraph, AnalysisError> {
    let roots = match root {
        Some(_) => pick_roots(c, root)?,
        None => c.declared_roots.clone(),
    };
    let g = ClosureGraph::new(c, &roots);
    timings.step("graph");
    if g.roots.is_empty() {
        // Same errors as pick_roots.
        pick_roots(c, root)?;
        return Err(AnalysisError::NoRoot {
            origin: c.origin.clone(),
        });
    }
    Ok(g)
}

/// The loader's warnings. Every loader that records an invalid path or leaves a NAR
/// size unknown says so among them (see [`Closure::warnings`]), so a report needs to
/// add nothing about either.
pub(crate) fn load_warnings(c: &Closure) -> Vec<LoadWarning> {
    c.warnings.clone()
}
