use super::*;

const ROCBLAS: &str = include_str!("../../../tests/fixtures/split/rocblas/default.nix");
const MERGE: &str = include_str!("../../../tests/fixtures/split/merge/default.nix");

fn attrs() -> SplitAttrs {
    SplitAttrs {
        package: "rocblas".into(),
        args: vec!["removeReferencesTo".into(), "rocm-llvm".into()],
        outputs: vec!["out".into(), "dev".into(), "gfx90a".into()],
        settings: vec![("outputInclude".into(), "\"out\"".into())],
        native_build_inputs: vec!["removeReferencesTo".into()],
        notes: vec!["stdenv writes $dev/nix-support/propagated-build-inputs".into()],
        post_fixup: vec![
            "    # class cmake (rule cmake): 3 file(s), e.g. lib/cmake/x.cmake".into(),
            "    moveToOutput 'lib/cmake' \"$dev\"".into(),
            "    remove-references-to -t ${rocm-llvm} \"$out\"/lib/librocblas.so".into(),
        ],
        gpu_targets: Vec::new(),
    }
}

/// A unified diff applied to `old`, checking every context and removed line.
fn apply_diff(old: &str, diff: &str) -> String {
    let old: Vec<&str> = old.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut at = 0;
    for line in diff.split_inclusive('\n') {
        if line.starts_with("---") || line.starts_with("+++") {
            continue;
        }
        if let Some(h) = line.strip_prefix("@@ -") {
            let from: usize = h.split([',', ' ']).next().unwrap().parse().unwrap();
            let upto = from.saturating_sub(1);
            out.extend(old[at..upto].iter().copied());
            at = upto;
        } else if let Some(l) = line.strip_prefix('+') {
            out.push_str(l);
        } else if let Some(l) = line.strip_prefix('-').or_else(|| line.strip_prefix(' ')) {
            assert_eq!(old[at], l, "diff line {line:?}");
            if line.starts_with(' ') {
                out.push_str(l);
            }
            at += 1;
        } else {
            panic!("not a diff line: {line:?}");
        }
    }
    out.extend(old[at..].iter().copied());
    out
}

fn parses(text: &str) {
    let p = rnix::Root::parse(text);
    assert!(p.errors().is_empty(), "{:?}\n{text}", p.errors());
}

fn count(text: &str, what: &str) -> usize {
    text.matches(what).count()
}

#[test]
fn rocblas_gets_every_attribute_once_after_src() {
    let a = attrs();
    let diff = expression_diff(&a, "pkgs/rocblas/default.nix", ROCBLAS).unwrap();
    assert!(
        diff.starts_with("--- a/pkgs/rocblas/default.nix\n+++ b/pkgs/rocblas/default.nix\n"),
        "{diff}"
    );
    let new = apply_diff(ROCBLAS, &diff);
    assert_eq!(new, patched(&a, "x", ROCBLAS).unwrap());
    parses(&new);
    for attr in [
        "  outputs = [ \"out\" \"dev\" \"gfx90a\" ];\n",
        "  outputInclude = \"out\";\n",
        "\n  postFixup = ''\n",
        "  nativeBuildInputs = [\n",
        "  # stdenv writes $dev/nix-support/propagated-build-inputs\n",
        "\n, removeReferencesTo\n, rocm-llvm\n}:\n",
    ] {
        assert_eq!(count(&new, attr), 1, "{attr:?} in\n{new}");
    }
    // The list gains the item on its own line; the lines keep their escapes.
    assert!(
        new.contains("    clr\n    removeReferencesTo\n  ];"),
        "{new}"
    );
    assert!(
        new.contains(
            "    remove-references-to -t ${rocm-llvm} \"$out\"/lib/librocblas.so\n  '';\n"
        ),
        "{new}"
    );
    // The block right after `src`, notes above `outputs`.
    let src_end = new.find("  };\n").unwrap() + 5;
    assert!(new[src_end..].starts_with("\n  # stdenv writes"), "{new}");
    // Nothing else changed.
    for l in ROCBLAS.lines() {
        assert!(new.contains(l), "{l:?} lost");
    }
    assert_eq!(count(&diff, "\n-"), 0, "{diff}");
}

#[test]
fn an_existing_outputs_list_and_postfixup_are_merged_into() {
    let a = attrs();
    let new = patched(&a, "default.nix", MERGE).unwrap();
    let diff = expression_diff(&a, "/abs/default.nix", MERGE).unwrap();
    assert!(
        diff.starts_with("--- a/default.nix\n+++ b/default.nix\n"),
        "{diff}"
    );
    assert_eq!(apply_diff(MERGE, &diff), new);
    parses(&new);
    assert_eq!(count(&new, "outputs ="), 1, "{new}");
    assert!(
        new.contains("    # stdenv writes $dev/nix-support/propagated-build-inputs\n    outputs = [ \"out\" \"dev\" \"gfx90a\" ];\n"),
        "{new}"
    );
    assert!(!new.contains("\"doc\""), "{new}");
    assert!(
        new.contains("nativeBuildInputs = [ pkg-config removeReferencesTo ];"),
        "{new}"
    );
    assert_eq!(count(&new, "postFixup ="), 1, "{new}");
    assert!(
        new.contains("        rm -r \"$out\"/share/info\n        # class cmake (rule cmake): 3 file(s), e.g. lib/cmake/x.cmake\n        moveToOutput 'lib/cmake' \"$dev\"\n"),
        "{new}"
    );
    // The new setting after `src`, in the set's own four-space indentation.
    assert!(
        new.contains("    };\n\n    outputInclude = \"out\";\n"),
        "{new}"
    );
    // Trailing-comma formals, before `...`.
    assert!(
        new.contains("  pkg-config,\n  removeReferencesTo,\n  rocm-llvm,\n  ...\n}:"),
        "{new}"
    );
    // Applied twice, nothing is added twice to the lists or formals.
    let again = patched(&a, "default.nix", &new).unwrap();
    assert_eq!(
        count(&again, "removeReferencesTo"),
        count(&new, "removeReferencesTo")
    );
}

#[test]
fn other_shapes_of_lists_strings_and_formals() {
    let mut a = attrs();
    a.args = vec!["removeReferencesTo".into()];
    let text = "{ stdenv, foo, ... }: with foo; stdenv.mkDerivation { name = \"x\"; nativeBuildInputs = foo.bar ++ [ foo ]; postFixup = \"echo hi\"; }\n";
    let new = patched(&a, "x.nix", text).unwrap();
    parses(&new);
    assert!(
        new.starts_with("{ stdenv, foo, removeReferencesTo, ... }:"),
        "{new}"
    );
    assert!(
        new.contains("nativeBuildInputs = foo.bar ++ [ foo ] ++ [ removeReferencesTo ];"),
        "{new}"
    );
    assert!(new.contains("postFixup = \"echo hi\" + ''\n"), "{new}");
    assert_eq!(count(&new, "outputs ="), 1);
    let text =
        "{ mkDerivation }:\nmkDerivation {\n  nativeBuildInputs = if true then [ ] else [ ];\n}\n";
    let new = patched(&a, "x.nix", text).unwrap();
    parses(&new);
    assert!(
        new.contains("(if true then [ ] else [ ]) ++ [ removeReferencesTo ]"),
        "{new}"
    );
    assert!(
        new.starts_with("{ mkDerivation, removeReferencesTo }:"),
        "{new}"
    );
}

#[test]
fn files_that_cannot_take_a_split_say_where_and_why() {
    let a = attrs();
    let err = |text: &str| {
        patched(&a, "pkg/default.nix", text)
            .unwrap_err()
            .to_string()
    };
    let e = err("{ a = 1; }\n");
    assert!(
        e.starts_with("pkg/default.nix:1:1: not a package expression"),
        "{e}"
    );
    let e = err("{ lib }:\n\nlib.fix (self: { })\n");
    assert!(
        e.starts_with("pkg/default.nix:3:1: no mkDerivation call"),
        "{e}"
    );
    let e = err("{ stdenv }:\nstdenv.mkDerivation [ ]\n");
    assert!(
        e.starts_with("pkg/default.nix:2:21: mkDerivation's argument"),
        "{e}"
    );
    let e = err("{ stdenv }:\nstdenv.mkDerivation {\n  x = ;\n}\n");
    assert!(e.starts_with("pkg/default.nix:3:"), "{e}");
    assert!(e.contains("not a Nix expression"), "{e}");
    let e = err("{ stdenv, outputs }:\nstdenv.mkDerivation {\n  inherit outputs;\n}\n");
    assert!(
        e.starts_with("pkg/default.nix:3:11: `outputs` is inherited"),
        "{e}"
    );
    let e = err("{ s }: [ (s.mkDerivation { }) (s.mkDerivation { }) ]");
    assert!(e.contains("2 mkDerivation calls"), "{e}");
    let e = err("");
    assert!(e.starts_with("pkg/default.nix:"), "{e}");
    // A mkDerivation inside a `let`, the function returning something else.
    let ok = "{ s, runCommand }:\nlet inner = s.mkDerivation { name = \"i\"; }; in runCommand \"x\" { } \"\"\n";
    assert!(patched(&a, "x", ok).is_ok());
}

#[test]
fn attributes_without_an_expression() {
    let t = attributes_text(&attrs());
    assert!(
        t.starts_with("# the function's arguments gain: removeReferencesTo, rocm-llvm\n"),
        "{t}"
    );
    assert!(t.contains("\noutputs = [ \"out\" \"dev\" \"gfx90a\" ];\noutputInclude = \"out\";\nnativeBuildInputs = [ removeReferencesTo ];\npostFixup = ''\n  # class cmake"), "{t}");
    assert!(t.ends_with("\n'';\n"), "{t}");
    parses(&format!("{{\n{t}}}"));
}

#[test]
fn header_paths() {
    assert_eq!(header_path("default.nix"), "default.nix");
    assert_eq!(header_path("./pkgs/x/default.nix"), "pkgs/x/default.nix");
    assert_eq!(header_path("../x/default.nix"), "default.nix");
    assert_eq!(header_path("/tmp/y/default.nix"), "default.nix");
}
