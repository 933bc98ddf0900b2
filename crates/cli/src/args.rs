//! A tiny argument parser: `--flag`, `--key value`, `--key=value` and positionals.
//! Kept in-house to keep the build lean; every mistake is a clear message.

use std::collections::BTreeMap;

/// Parsed command-line arguments of one subcommand.
pub struct Args {
    values: BTreeMap<String, String>,
    flags: Vec<String>,
    pub positional: Vec<String>,
}

impl Args {
    /// Parses `args`; `flags` lists the options that take no value.
    pub fn parse(args: &[String], flags: &[&str], options: &[&str]) -> Result<Args, String> {
        let mut out = Args { values: BTreeMap::new(), flags: Vec::new(), positional: Vec::new() };
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if let Some(name) = a.strip_prefix("--") {
                let (name, inline) = match name.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (name, None),
                };
                if flags.contains(&name) {
                    out.flags.push(name.to_string());
                } else if options.contains(&name) {
                    let v = match inline {
                        Some(v) => v,
                        None => {
                            i += 1;
                            args.get(i).cloned().ok_or_else(|| format!("--{name} needs a value"))?
                        }
                    };
                    out.values.insert(name.to_string(), v);
                } else {
                    return Err(format!("unknown option --{name}"));
                }
            } else {
                out.positional.push(a.clone());
            }
            i += 1;
        }
        Ok(out)
    }

    /// True if the flag was given.
    pub fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }

    /// The option's value, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(|s| s.as_str())
    }

    /// The option's value, or an error naming it.
    pub fn require(&self, name: &str) -> Result<&str, String> {
        self.get(name).ok_or_else(|| format!("missing --{name}"))
    }
}
