//! Every command answers `--help` (issue 9 s4: `tunelab run --help` used to fail with "unknown
//! option --help"), bad arguments exit 2 with "error: ...", and completions are generated.

use std::process::Command;

fn tunelab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tunelab")).args(args).output().expect("runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn every_command_has_help() {
    let (code, top, _) = tunelab(&["--help"]);
    assert_eq!(code, 0);
    let commands: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .filter(|c| c != "help")
        .collect();
    for c in ["run", "eval", "url", "op", "devices", "replay", "strategies", "bench", "completions"] {
        assert!(commands.iter().any(|x| x == c), "{c} missing from {commands:?}");
    }
    for c in &commands {
        let (code, out, err) = tunelab(&[c, "--help"]);
        assert_eq!(code, 0, "{c} --help: {err}");
        assert!(out.contains(&format!("Usage: tunelab {c}")), "{c}: {out}");
    }
    // No command: the list of commands, exit 2.
    let (code, _, err) = tunelab(&[]);
    assert_eq!(code, 2);
    assert!(err.contains("Commands:"), "{err}");
}

#[test]
fn bad_arguments_exit_2_with_an_error_line() {
    for args in [&["nope"][..], &["run", "a.json", "--bogus"], &["op", "--device", "910B2"], &["replay", "--cache", "x"], &["completions", "tcsh"]] {
        let (code, _, err) = tunelab(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
    }
}

#[test]
fn completions_are_generated_for_bash_zsh_and_fish() {
    for shell in ["bash", "zsh", "fish"] {
        let (code, out, err) = tunelab(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains("tunelab") && out.contains("eval") && out.contains("warm-from"), "{shell}");
    }
}
