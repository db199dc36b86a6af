//! The help screen (`?`): every key, and what each number means.

/// The text of the help screen.
pub fn text() -> String {
    "\
nixcut browse: the closure of ROOT, one path at a time.

Panes
  referrers    the paths that refer to the selected path (Tab goes there)
  selected     the selected path: its sizes and verdict
  references   what the selected path refers to, largest added size first
  evidence     how the highlighted edge is made (file, offset, kind), and a
               shortest chain from ROOT to the selected path

Numbers
  NAR          the path's own size (its NAR)
  closure      the path and everything it refers to, directly or not
  added        what would leave ROOT's closure with the path: the path and
               every path only it keeps in (its dominator subtree), as `why`
  verdict      what the files of the path before it on the way here say
               of the reference (runtime, dev, doc, gpu:<arch>, removable,
               unknown)

Keys
  j k ↓ ↑      move (PgUp PgDn Home End)
  Enter l →    select the highlighted path
  Backspace h ← back
  Tab          switch between references and referrers
  /            search by name (as you type; Enter keeps, Esc goes back)
  n N          next, previous match
  w            why ROOT TARGET: every chain to the selected path, with evidence
  g            gpu: the GPU architectures in the selected path's closure
  s            split SELECTED --for ROOT: the proposed outputs and savings
  d            diff against OTHER (any input nixcut reads): + added,
               > grown, < shrunk, ~ rebuilt, - gone (references OTHER had)
  ?            this help          q  quit (Esc or q closes a report)

Evidence is gathered in the background, the selection first; the status
line counts the paths scanned.
"
    .to_string()
}
