//! `tunelab run` (being built; see the issue that owns it).

pub fn main(_args: &[String]) -> Result<(), String> {
    Err("the 'run' command is not available in this build yet".into())
}
