//! `tunelab completions bash|zsh|fish|elvish|powershell`: prints a shell completion script
//! generated from the same clap definition the command parses with.
//!
//! bash: `tunelab completions bash > ~/.local/share/bash-completion/completions/tunelab`.

use clap::CommandFactory;

/// Arguments of `tunelab completions`.
#[derive(clap::Args)]
pub struct Args {
    /// The shell to write completions for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

pub fn main(a: Args) -> Result<(), String> {
    let mut cmd = crate::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "tunelab", &mut script);
    use std::io::Write;
    match std::io::stdout().write_all(&script) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("cannot write the completion script: {e}")),
        _ => Ok(()),
    }
}
