//! The crate's arrangement by role, checked: the specification imports none of the stages, the
//! analyses, the evidence or the run; the stages import none of the analyses, the evidence or the
//! run. Dependencies point one way (spec <- stages <- run <- analyses, evidence), so no import
//! circle spans two folders and option types stay data that the specification owns.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Lines of code (comments skipped) in `folder` that name a crate path from `forbidden`.
fn reaches(folder: &str, forbidden: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(folder);
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(!files.is_empty(), "no sources under {folder}");
    let mut bad = Vec::new();
    for f in files {
        for (i, line) in std::fs::read_to_string(&f).unwrap().lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for name in forbidden {
                let pat = format!("crate::{name}");
                if let Some(at) = code.find(&pat) {
                    let next = code[at + pat.len()..].chars().next();
                    if !next.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                        bad.push(format!("{}:{}: {}", f.display(), i + 1, code));
                    }
                }
            }
        }
    }
    bad
}

#[test]
fn the_specification_imports_no_stage_analysis_evidence_or_run() {
    let bad = reaches("spec", &["stages", "analyses", "evidence", "run", "Run", "Report", "setup", "StageSetup"]);
    assert!(bad.is_empty(), "the specification must not depend on what depends on it:\n{}", bad.join("\n"));
}

#[test]
fn the_stages_import_no_analysis_evidence_or_run() {
    let bad = reaches("stages", &["analyses", "evidence", "run", "Run", "Report"]);
    assert!(bad.is_empty(), "the stages must not depend on the analyses, the evidence or the run:\n{}", bad.join("\n"));
}

#[test]
fn the_run_imports_no_analysis_or_evidence() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/run.rs");
    let text = std::fs::read_to_string(root).unwrap();
    let bad: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//") && (l.contains("crate::analyses") || l.contains("crate::evidence"))).collect();
    assert!(bad.is_empty(), "run.rs reaches into the analyses or the evidence:\n{}", bad.join("\n"));
}
