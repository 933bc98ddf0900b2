//! The page's state in the URL fragment, so a link reproduces a run.
//!
//! Reading is bounded and strict about shape (a corrupt link is reported, never half-applied);
//! unknown keys are ignored and missing ones take defaults, so older links keep working.

/// Longest fragment we read; anything longer is refused before parsing.
pub const MAX_FRAGMENT: usize = 8 * 1024;
/// Prefix of a Kernel Tuner replay link.
pub const REPLAY_PREFIX: &str = "replay1:";

/// What the replay page needs to reproduce a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplaySettings {
    /// Strategies run side by side (registry names).
    pub strategies: Vec<String>,
    /// Distinct evaluations per strategy.
    pub budget: usize,
    /// The seed of every lane.
    pub seed: u64,
}

impl Default for ReplaySettings {
    fn default() -> Self {
        ReplaySettings { strategies: vec!["random".into()], budget: 100, seed: 0 }
    }
}

/// Largest budget a link may ask for (the bundled cache has a few thousand configurations).
pub const MAX_BUDGET: usize = 100_000;

impl ReplaySettings {
    /// The fragment (without '#') that reproduces these settings.
    pub fn encode(&self) -> String {
        format!("{REPLAY_PREFIX}s={};b={};seed={}", self.strategies.join(","), self.budget, self.seed)
    }

    /// Reads a fragment (with or without '#'); an empty one gives the defaults.
    pub fn decode(fragment: &str) -> Result<ReplaySettings, String> {
        if fragment.len() > MAX_FRAGMENT {
            return Err(format!("the link's fragment is {} bytes long; at most {MAX_FRAGMENT} are read", fragment.len()));
        }
        let f = fragment.strip_prefix('#').unwrap_or(fragment);
        if f.is_empty() {
            return Ok(ReplaySettings::default());
        }
        let body = f.strip_prefix(REPLAY_PREFIX).ok_or("the link's fragment is not a Tunelab scenario")?;
        let mut s = ReplaySettings::default();
        for part in body.split(';').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| format!("'{}' is not key=value", clip(part)))?;
            match k {
                "s" => {
                    let names: Vec<String> = v.split(',').filter(|n| !n.is_empty()).map(str::to_string).collect();
                    if names.is_empty() || names.len() > 8 {
                        return Err("a link names one to eight strategies".into());
                    }
                    if let Some(bad) = names.iter().find(|n| !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')) {
                        return Err(format!("'{}' is not a strategy name", clip(bad)));
                    }
                    s.strategies = names;
                }
                "b" => {
                    s.budget = v.parse().map_err(|_| format!("budget '{}' is not a positive integer", clip(v)))?;
                    if s.budget == 0 || s.budget > MAX_BUDGET {
                        return Err(format!("budget {} is outside 1..={MAX_BUDGET}", s.budget));
                    }
                }
                "seed" => s.seed = v.parse().map_err(|_| format!("seed '{}' is not a non-negative integer", clip(v)))?,
                _ => {}
            }
        }
        Ok(s)
    }
}

/// At most 40 characters of untrusted text, for messages.
pub fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let s = ReplaySettings { strategies: vec!["random".into(), "bayes".into()], budget: 50, seed: 9 };
        assert_eq!(ReplaySettings::decode(&format!("#{}", s.encode())).unwrap(), s);
        assert_eq!(ReplaySettings::decode("").unwrap(), ReplaySettings::default());
    }

    #[test]
    fn hostile_fragments_are_refused_with_a_reason() {
        for f in ["#<script>alert(1)</script>", "#replay1:b=0", "#replay1:b=abc", "#replay1:s=<img>", "#replay1:nokey"] {
            assert!(ReplaySettings::decode(f).is_err(), "{f}");
        }
        let huge = format!("#{REPLAY_PREFIX}{}", "x".repeat(MAX_FRAGMENT));
        assert!(ReplaySettings::decode(&huge).unwrap_err().contains("at most"));
    }

    #[test]
    fn unknown_keys_are_ignored() {
        assert_eq!(ReplaySettings::decode("#replay1:b=7;future=1").unwrap().budget, 7);
    }
}
