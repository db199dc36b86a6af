//! `--format html` and `--format dot`: the treemap page opened in real headless
//! Chromium (areas measured from the rendered DOM against the JSON report), the dot
//! output fed to real Graphviz, hostile names escaped, and a 10,000-path closure
//! within the size budget.
//!
//! Tests that need Chromium or Graphviz skip (saying so) when it is missing, and fail
//! instead under `NIXCUT_REQUIRE_NIX=1`, as in CI.

mod common;

use common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// Run nixcut and return stdout as a string; panics with stderr on failure.
fn stdout_of(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "nixcut {args:?} failed: {err}");
    out
}

/// A script appended to a copy of the page: it measures every path's rectangle as
/// Chromium laid it out, and the treemap, and writes them into the DOM as JSON.
const MEASURE: &str = r#"<script>
(function(){
var svg=document.querySelector('svg.pick').getBoundingClientRect();
var out={svg:[svg.width,svg.height],rects:[]};
document.querySelectorAll('g[data-path]>rect.p').forEach(function(r){
var b=r.getBoundingClientRect();
out.rects.push({path:r.parentNode.getAttribute('data-path'),x:b.x,y:b.y,w:b.width,h:b.height});});
out.packages=document.querySelectorAll('g[data-package]>rect.bar').length;
var all=document.querySelectorAll('g[data-path]>rect.p,g[data-package]>rect.bar');var last=all[all.length-1];
if(last){last.dispatchEvent(new MouseEvent('click',{bubbles:true}));
out.clicked=last.parentNode.getAttribute('data-path')||last.parentNode.getAttribute('data-package');
var box=document.getElementById('details');out.details=box.hidden?null:box.querySelector('pre').textContent;
out.outlined=!!document.querySelector('svg .hl');}
var pre=document.createElement('pre');pre.id='measured';
pre.textContent=btoa(unescape(encodeURIComponent(JSON.stringify(out))));document.body.appendChild(pre);
})();
</script>"#;

#[derive(Debug)]
struct Measured {
    svg: (f64, f64),
    rects: Vec<(String, f64, f64, f64, f64)>,
    /// Bars of a diff page.
    packages: u64,
    /// What the script clicked (the last path drawn, or a bar), and what the details
    /// panel then showed (None: still hidden), and whether it outlined it.
    clicked: Option<String>,
    details: Option<String>,
    outlined: bool,
}

/// Open `html` in headless Chromium: a screenshot into `png`, and the rectangles of
/// the rendered DOM.
fn open_in_chromium(html: &str, dir: &Path, png: &Path) -> Measured {
    let page = dir.join("page.html");
    std::fs::write(&page, html).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let shot = chromium(profile.path())
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1400,820")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(
        shot.status.success(),
        "chromium --screenshot failed: {shot:?}"
    );
    let bytes = std::fs::read(png).expect("screenshot written");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 10_000);

    let instrumented = dir.join("measure.html");
    let with_script = html.replace("</body>", &format!("{MEASURE}</body>"));
    std::fs::write(&instrumented, with_script).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let out = chromium(profile.path())
        .arg("--window-size=1400,820")
        .arg("--dump-dom")
        .arg(format!("file://{}", instrumented.display()))
        .output()
        .expect("run chromium");
    assert!(out.status.success(), "chromium --dump-dom failed: {out:?}");
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom
        .find("<pre id=\"measured\">")
        .unwrap_or_else(|| panic!("the page's script did not run: {dom}"))
        + "<pre id=\"measured\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = base64_decode(&dom[start..end]);
    let v: Value = serde_json::from_slice(&json).unwrap();
    Measured {
        svg: (v["svg"][0].as_f64().unwrap(), v["svg"][1].as_f64().unwrap()),
        rects: v["rects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["path"].as_str().unwrap().to_string(),
                    r["x"].as_f64().unwrap(),
                    r["y"].as_f64().unwrap(),
                    r["w"].as_f64().unwrap(),
                    r["h"].as_f64().unwrap(),
                )
            })
            .collect(),
        packages: v["packages"].as_u64().unwrap_or(0),
        clicked: v["clicked"].as_str().map(str::to_string),
        details: v["details"].as_str().map(str::to_string),
        outlined: v["outlined"].as_bool().unwrap_or(false),
    }
}

/// Clicking showed the clicked thing's details and outlined it.
fn assert_click_shows_details(m: &Measured) {
    let clicked = m.clicked.as_deref().expect("nothing to click");
    let details = m
        .details
        .as_deref()
        .expect("the details panel stayed hidden");
    assert!(
        details.contains(clicked),
        "clicked {clicked}, panel shows {details}"
    );
    assert!(m.outlined, "the clicked block is not outlined");
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s
        .bytes()
        .filter(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
    {
        acc = (acc << 6) | val(c) as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// The page references nothing outside itself.
fn assert_self_contained(html: &str) {
    for bad in [
        "http://", "https://", "//", "<link", " src=", "@import", "url(",
    ] {
        assert!(!html.contains(bad), "the page contains {bad:?}");
    }
}

/// Render ROOT's why report as HTML in Chromium and check the picture against the
/// JSON report: areas ∝ added size within 2%, the biggest rectangles are the biggest
/// paths, every rectangle inside its dominator's. Returns the page.
fn check_treemap(input: &[&str], png: &Path) -> String {
    let mut args = vec!["why"];
    args.extend_from_slice(input);
    let html = stdout_of(&[args.as_slice(), &["--format", "html"]].concat());
    assert_self_contained(&html);
    let report = json(&[args.as_slice(), &["--format", "json"]].concat());
    let rows: HashMap<&str, &Value> = report["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["path"].as_str().unwrap(), p))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let m = open_in_chromium(&html, dir.path(), png);
    assert!(m.rects.len() >= 5, "too few rectangles: {m:?}");
    assert_click_shows_details(&m);
    let details = m.details.as_deref().unwrap();
    assert!(
        details.contains("added ") && details.contains("chain: "),
        "{details}"
    );
    let closure = report["closure_size"].as_u64().unwrap() as f64;
    let per_byte = m.svg.0 * m.svg.1 / closure;
    let added = |p: &str| rows[p]["added_size"].as_u64().unwrap() as f64;
    let mut worst = 0.0f64;
    for (p, _, _, w, h) in &m.rects {
        let want = added(p) * per_byte;
        let err = (w * h - want).abs() / want;
        worst = worst.max(err);
        assert!(
            err <= 0.02,
            "{p}: area {} px², want {want} (off by {:.2}%)",
            w * h,
            err * 100.0
        );
    }
    eprintln!(
        "{input:?}: {} rectangles in a {:.0}×{:.0} px treemap, largest area error {:.3}%",
        m.rects.len(),
        m.svg.0,
        m.svg.1,
        worst * 100.0
    );
    // The biggest rectangles are the paths with the biggest added sizes.
    let mut by_area = m.rects.clone();
    by_area.sort_by(|a, b| (b.3 * b.4).total_cmp(&(a.3 * a.4)));
    let mut by_added: Vec<&str> = m.rects.iter().map(|r| r.0.as_str()).collect();
    by_added.sort_by(|a, b| added(b).total_cmp(&added(a)));
    assert_eq!(by_area[0].0, report["paths"][0]["path"].as_str().unwrap());
    for k in 0..8.min(by_area.len()) {
        assert_eq!(
            added(&by_area[k].0),
            added(by_added[k]),
            "rank {k}: biggest rectangle {} is not the {k}th biggest path {}",
            by_area[k].0,
            by_added[k]
        );
    }
    // Nested: inside the dominator's rectangle when that is drawn.
    let rect_of: HashMap<&str, (f64, f64, f64, f64)> = m
        .rects
        .iter()
        .map(|(p, x, y, w, h)| (p.as_str(), (*x, *y, *w, *h)))
        .collect();
    let mut nested = 0;
    for (p, x, y, w, h) in &m.rects {
        if let Some(d) = rows[p.as_str()]["dominator"].as_str() {
            let (dx, dy, dw, dh) = rect_of[d];
            let e = 0.05;
            assert!(
                *x >= dx - e && *y >= dy - e && x + w <= dx + dw + e && y + h <= dy + dh + e,
                "{p} is not inside its dominator {d}"
            );
            nested += 1;
        }
    }
    assert!(nested > 0);
    html
}

#[test]
fn treemap_of_the_rocm_example_in_chromium() {
    if !tool_or_skip(
        "treemap_of_the_rocm_example_in_chromium",
        "chromium",
        "chromium",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("rocm.png");
    let input = repo().join("examples/llama-cpp-rocm.json");
    let html = check_treemap(&[input.to_str().unwrap()], &png);
    assert!(html.contains("rocblas-5.7.1"));
    assert!(html.contains("No files were scanned"));
}

#[test]
fn treemap_of_the_cuda_example_in_chromium() {
    if !tool_or_skip(
        "treemap_of_the_cuda_example_in_chromium",
        "chromium",
        "chromium",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("cuda.png");
    let input = repo().join("examples/llama-cpp-cuda.json");
    check_treemap(&[input.to_str().unwrap()], &png);
}

/// The Nix-built world has files: the colours are verdicts, with a GPU architecture.
#[test]
fn treemap_of_the_nix_built_world_is_coloured_by_verdict() {
    if !tool_or_skip(
        "treemap_of_the_nix_built_world_is_coloured_by_verdict",
        "chromium",
        "chromium",
    ) || !nix_or_skip("treemap_of_the_nix_built_world_is_coloured_by_verdict")
    {
        return;
    }
    let w = rocm_world();
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("world.png");
    let html = check_treemap(&[&w.root, "--no-cache"], &png);
    assert!(
        html.contains("What keeps each path in"),
        "no verdict legend"
    );
    assert!(html.contains(">runtime</li>"), "no runtime in the legend");
    assert!(
        html.contains(">gpu:gfx"),
        "no GPU architecture in the legend"
    );
}

#[test]
fn dot_output_is_accepted_by_graphviz() {
    if !tool_or_skip("dot_output_is_accepted_by_graphviz", "dot", "graphviz") {
        return;
    }
    let input = repo().join("examples/llama-cpp-rocm.json");
    let dot = stdout_of(&[
        "why",
        input.to_str().unwrap(),
        "--top",
        "20",
        "--format",
        "dot",
    ]);
    assert!(dot.starts_with("digraph why {"));
    assert!(dot.matches(" [label=").count() >= 20, "{dot}");
    let svg = graphviz_svg(&dot);
    assert!(svg.contains("rocblas-5.7.1"));
    // The chain tree too.
    let target = "rocblas-tensile-gfx90";
    let dot = stdout_of(&["why", input.to_str().unwrap(), target, "--format", "dot"]);
    assert!(graphviz_svg(&dot).contains(target));
}

fn graphviz_svg(dot: &str) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("dot")
        .arg("-Tsvg")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run dot");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(dot.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "dot -Tsvg refused the output: {}\n{dot}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Some Graphviz releases (2.43, Debian 12's) write `-` as `&#45;` in SVG text.
    String::from_utf8(out.stdout).unwrap().replace("&#45;", "-")
}

#[test]
fn diff_page_marks_growth_and_shrinkage() {
    let cuda = repo().join("examples/llama-cpp-cuda.json");
    let rocm = repo().join("examples/llama-cpp-rocm.json");
    let html = stdout_of(&[
        "diff",
        cuda.to_str().unwrap(),
        rocm.to_str().unwrap(),
        "--format",
        "html",
    ]);
    assert_self_contained(&html);
    assert!(html.contains("grows →") && html.contains("← shrinks"));
    // rocblas came in: a red bar with a positive impact.
    let at = html.find("data-package=\"rocblas\"").expect("rocblas bar");
    let bar = &html[at..at + html[at..].find("</g>").unwrap()];
    assert!(bar.contains("#d64541"), "{bar}");
    assert!(html.contains("data-impact=\"-"), "no shrinking package");
    if tool_or_skip(
        "diff_page_marks_growth_and_shrinkage",
        "chromium",
        "chromium",
    ) {
        let dir = tempfile::tempdir().unwrap();
        let m = open_in_chromium(&html, dir.path(), &dir.path().join("diff.png"));
        assert_eq!(m.packages, html.matches("class=\"bar\"").count() as u64);
        assert!(m.packages >= 20, "{m:?}");
        assert_click_shows_details(&m);
    }
}

#[test]
fn formats_without_a_picture_are_errors() {
    let input = repo().join("examples/llama-cpp-rocm.json");
    let (code, _, err) = run(&["refs", input.to_str().unwrap(), "--format", "dot"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("has no `--format dot`"), "{err}");
}

/// A store laid out under `--store-root` whose file name and file contents are
/// hostile: markup, quotes, `&`, a newline, a bidi override and a non-UTF-8 byte. The
/// evidence carries them into the report; the HTML and the dot output must show them
/// as text, never as markup or syntax.
#[test]
fn hostile_names_are_escaped_in_html_and_dot() {
    use std::os::unix::ffi::OsStrExt;
    let root = tempfile::tempdir().unwrap();
    let store = root.path().join("nix/store");
    let app = "/nix/store/0aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-app?=x+y_1.0";
    let lib = "/nix/store/1bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-lib.--=2";
    let app_dir = store.join(&app["/nix/store/".len()..]);
    let lib_dir = store.join(&lib["/nix/store/".len()..]);
    std::fs::create_dir_all(app_dir.join("share")).unwrap();
    std::fs::create_dir_all(&lib_dir).unwrap();
    std::fs::write(lib_dir.join("data"), vec![0u8; 4096]).unwrap();
    let hostile_name: &[u8] = b"<script>alert('x')<\"&amp;\n\xe2\x80\xae\xff.txt";
    let file = app_dir
        .join("share")
        .join(std::ffi::OsStr::from_bytes(hostile_name));
    let contents = format!("</svg><script>alert(1)</script>\"'& \u{202e}{lib}/data\n");
    std::fs::write(&file, contents).unwrap();
    let info = serde_json::json!([
        {"path": app, "narHash": "sha256-aq+iIrezGhfSit6mFf4iaySy7MnWQsqFxREkFsfFjZs=",
         "narSize": 1000, "references": [lib], "valid": true},
        {"path": lib, "narHash": "sha256-aq+iIrezGhfSit6mFf4iaySy7MnWQsqFxREkFsfFjZs=",
         "narSize": 5000, "references": [], "valid": true}
    ]);
    let input = root.path().join("closure.json");
    std::fs::write(&input, info.to_string()).unwrap();
    let base = [
        "why",
        input.to_str().unwrap(),
        "--store-root",
        root.path().to_str().unwrap(),
        "--no-cache",
    ];
    let report = json(&[base.as_slice(), &["--format", "json"]].concat());
    let kept = report["paths"][1]["kept_by"].to_string();
    assert!(
        kept.contains("script"),
        "the hostile file is not in the evidence: {kept}"
    );

    let html = stdout_of(&[base.as_slice(), &["--format", "html"]].concat());
    assert_self_contained(&html);
    // Our own markup only: one script element, one svg, no stray tags.
    assert_eq!(html.matches("<script").count(), 1, "{html}");
    assert_eq!(html.matches("</svg>").count(), 1, "{html}");
    assert!(
        !html.contains("alert('x')") && !html.contains("\u{202e}"),
        "{html}"
    );
    assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)"), "{html}");
    assert!(
        html.contains("\\u{202e}"),
        "bidi override not shown: {html}"
    );
    // Real Chromium parses it into the expected structure: the script that ran is ours.
    if tool_or_skip(
        "hostile_names_are_escaped_in_html_and_dot",
        "chromium",
        "chromium",
    ) {
        let dir = tempfile::tempdir().unwrap();
        let m = open_in_chromium(&html, dir.path(), &dir.path().join("hostile.png"));
        assert_eq!(m.rects.len(), 2, "{m:?}");
    }

    let dot = stdout_of(&[base.as_slice(), &["--format", "dot"]].concat());
    for line in dot
        .lines()
        .filter(|l| l.contains("->") || l.contains("[label="))
    {
        // Each statement is one line: no raw newline escaped a string.
        assert!(
            line.trim_end().ends_with("];") || line.trim_end().ends_with(';'),
            "{line}"
        );
    }
    assert!(!dot.contains('\u{202e}'), "{dot}");
    if tool_or_skip(
        "hostile_names_are_escaped_in_html_and_dot",
        "dot",
        "graphviz",
    ) {
        graphviz_svg(&dot);
    }
}

/// A generated 10,000-path closure: the page stays under 2 MiB, and small paths
/// merge into "other" blocks.
#[test]
fn ten_thousand_paths_stay_under_two_mebibytes() {
    // A layered graph: each path refers to a few paths of the next layer, sizes
    // spread over five orders of magnitude (a deterministic generator).
    let n = 10_000usize;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let alphabet = b"0123456789abcdfghijklmnpqrsvwxyz";
    let path = |i: usize| {
        let mut h = String::new();
        let mut x = i as u64 * 2_654_435_761 + 17;
        for _ in 0..32 {
            h.push(alphabet[(x % 32) as usize] as char);
            x = x / 32 + (i as u64 % 7) * 1_000_003;
        }
        format!("/nix/store/{h}-pkg{i}-1.0")
    };
    let mut entries = Vec::with_capacity(n);
    for i in 0..n {
        let refs: Vec<String> = if i == 0 {
            (1..40).map(path).collect()
        } else {
            (0..(next() % 4))
                .map(|_| i + 1 + (next() % 200) as usize)
                .filter(|&j| j < n)
                .map(path)
                .collect()
        };
        let size = 1000 * (1 + next() % 100_000) * if next() % 50 == 0 { 100 } else { 1 };
        entries.push(serde_json::json!({
            "path": path(i), "narHash": "sha256-aq+iIrezGhfSit6mFf4iaySy7MnWQsqFxREkFsfFjZs=",
            "narSize": size, "references": refs, "valid": true
        }));
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.json");
    std::fs::write(&input, Value::Array(entries).to_string()).unwrap();
    let html = stdout_of(&[
        "why",
        input.to_str().unwrap(),
        "--root",
        &path(0),
        "--format",
        "html",
    ]);
    assert_self_contained(&html);
    let drawn = html.matches("<g data-path=").count();
    let others = html.matches("<g class=\"other\"").count();
    eprintln!(
        "10,000-path closure: {} bytes of HTML, {drawn} rectangles, {others} other blocks",
        html.len()
    );
    assert!(html.len() < 2 * 1024 * 1024, "{} bytes", html.len());
    assert!(drawn > 100 && others > 10, "{drawn} drawn, {others} other");
}

/// The `dominator` the treemap nests by: absent for the root only; on the path's
/// shortest chain (a dominator is on every chain); with an added size that holds
/// the path's.
#[test]
fn json_dominators_are_on_the_chain_and_hold_the_added_size() {
    let input = repo().join("examples/llama-cpp-rocm.json");
    let r = json(&["why", input.to_str().unwrap(), "--format", "json"]);
    let paths = r["paths"].as_array().unwrap();
    let added: HashMap<&str, u64> = paths
        .iter()
        .map(|p| {
            (
                p["path"].as_str().unwrap(),
                p["added_size"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut with = 0;
    for p in paths {
        let me = p["path"].as_str().unwrap();
        let chain: Vec<&str> = p["chain"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        match p.get("dominator").and_then(Value::as_str) {
            None => assert_eq!(me, r["root"].as_str().unwrap(), "{me} has no dominator"),
            Some(d) => {
                with += 1;
                assert!(
                    chain[..chain.len() - 1].contains(&d),
                    "{d} not on {me}'s chain"
                );
                assert!(added[d] >= added[me], "{d} does not hold {me}");
            }
        }
    }
    assert_eq!(with, paths.len() - 1);
}

/// `split … --format html`: the package now and its proposed outputs side by side, each
/// output a block with its exact size; ROOT's closure before and after.
#[test]
fn split_page_shows_the_package_before_and_after() {
    if !nix_or_skip("split_page_shows_the_package_before_and_after") {
        return;
    }
    let w = rocm_world();
    let args = [
        "split",
        w.path("rocblas"),
        "--for",
        w.root.as_str(),
        "--gpu-targets",
        "gfx1030",
    ];
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let plan = json(&json_args);
    let mut html_args = args.to_vec();
    html_args.extend(["--format", "html"]);
    let html = stdout_of(&html_args);
    assert_self_contained(&html);
    let outputs = plan["outputs"].as_array().unwrap();
    assert!(outputs.len() >= 3, "{plan:#}");
    // One block for the package now, one per proposed output.
    assert_eq!(html.matches("<g data-output=").count(), outputs.len() + 1);
    for o in outputs {
        let name = o["name"].as_str().unwrap();
        let size = nixcut::store::format_size(o["size"].as_u64().unwrap());
        assert!(
            html.contains(&format!("data-output=\"{name} ({size})\"")),
            "no block for output {name} ({size})"
        );
    }
    let f = &plan["for"];
    for key in ["closure_size_before", "closure_size_after"] {
        let s = nixcut::store::format_size(f[key].as_u64().unwrap());
        assert!(html.contains(&s), "{key} {s} not shown");
    }
    if tool_or_skip(
        "split_page_shows_the_package_before_and_after",
        "chromium",
        "chromium",
    ) {
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("split.html");
        std::fs::write(&page, &html).unwrap();
        let profile = tempfile::tempdir().unwrap();
        let png = dir.path().join("split.png");
        let shot = chromium(profile.path())
            .arg(format!("--screenshot={}", png.display()))
            .arg("--window-size=1400,820")
            .arg(format!("file://{}", page.display()))
            .output()
            .expect("run chromium");
        assert!(shot.status.success(), "{shot:?}");
        assert!(
            std::fs::metadata(&png).unwrap().len() > 10_000,
            "an empty screenshot"
        );
    }
}
