//! The landscape stage: a search problem whose whole surface is known, for racing strategies on
//! real measured data (a Kernel Tuner cache) or on a 2-D analytic function drawn whole.
//!
//! Why a stage: the races, Step, the charts and the teaching cards all run through `Run` and
//! `Study`, so a landscape plugs into that one path instead of having a replay loop of its own.
//! A Kernel Tuner cache is replayed as Kernel Tuner's simulation mode does (the space is the set
//! of cached configurations, a failed measurement is a failed evaluation that still costs budget),
//! through `kernel_tuner::KernelTunerCache::lookup`, so lane 0 of a landscape run gives the same
//! trials as `kernel_tuner::replay` (what `tunelab replay` runs) for the same seed and budget.
//!
//! The cache's bytes never travel in the scenario: a bundled cache is named, and a file the user
//! dropped is recorded by its name, its configuration count and the SHA-256 of its JSON text, so
//! a shared link can ask for the file again and check that the file given is the same one. The
//! engine does no file or network I/O: the CLI reads the file, the browser fetches or is handed
//! it, and both pass the bytes to `Landscape::build`, which parses them once.

use crate::spec::scenario::{clip, Scenario, Stage};
use crate::stages::StageSetup;
use std::sync::Arc;
use tunelab_search::kernel_tuner::{self, KernelTunerCache};
use tunelab_search::{Config, Metric, Objective, Outcome, Param, Space, Value};

mod report;
mod sha256;
mod slice;
mod surface;
mod toy;
pub use report::{source_label, LandscapeReport};
pub use sha256::sha256_hex;
pub use slice::{optimum_in, slice_space};
pub use surface::{Surface, MAX_SURFACE_LEVELS};
pub use toy::{toy_function, ToyFunction, TOY_FUNCTIONS};
// The source types and their checks are specification data; re-exported for existing paths.
pub use crate::spec::options::landscape::*;
use toy::axis;

/// A landscape built from its source: the space, the objective and the whole surface.
pub struct Landscape {
    source: LandscapeSource,
    kind: Kind,
    /// The true optimum, found once when built (`optimum`).
    best: Option<(Config, f64)>,
}

enum Kind {
    Cache { cache: KernelTunerCache, digest: String },
    Toy(Toy),
}

struct Toy {
    function: &'static ToyFunction,
    xs: Vec<f64>,
    ys: Vec<f64>,
    space: Space,
    /// f at every grid point, row-major: index iy * n + ix.
    values: Vec<f64>,
}

/// What a scenario's landscape needs from outside before it can run.
#[derive(Clone, Debug, PartialEq)]
pub enum Needed {
    /// A bundled cache: fetch or read `file` (a name in `BUNDLED_CACHES`).
    Bundled { name: String, file: &'static str },
    /// A user's file: ask for it again; `message` says so in a sentence.
    Dropped { name: String, digest: String, configs: usize, message: String },
}

/// The bytes a scenario's landscape needs (None: a toy landscape or another stage). An unknown
/// bundled name is reported by `Landscape::build` and by validation, not here.
pub fn needs_bytes(s: &Scenario) -> Option<Needed> {
    if s.stage != Stage::Landscape {
        return None;
    }
    match s.landscape.as_ref()? {
        LandscapeSource::Toy(_) => None,
        LandscapeSource::KernelTuner(KernelTunerSource::Bundled(n)) => bundled_file(n).map(|file| Needed::Bundled { name: n.clone(), file }),
        LandscapeSource::KernelTuner(KernelTunerSource::Dropped(d)) => Some(Needed::Dropped { name: d.name.clone(), digest: d.digest.clone(), configs: d.configs, message: drop_again(d) }),
    }
}

fn drop_again(d: &DroppedCache) -> String {
    format!(
        "drop '{}' again (SHA-256 {}..., {} configurations): a link carries only a dropped cache's name and digest, never the file",
        clip(&d.name),
        d.digest.get(..12).unwrap_or(&d.digest),
        d.configs
    )
}

/// The digest recorded for a cache file: SHA-256 of its JSON text (gunzipped when gzip, byte
/// order mark dropped), so `x.json` and `x.json.gz` of one cache have the same digest.
pub fn cache_digest(bytes: &[u8]) -> Result<String, String> {
    Ok(sha256_hex(kernel_tuner::text_of(bytes)?.as_bytes()))
}

/// A newly dropped cache file: parses it once and returns the source to record in the scenario
/// (name, digest, configuration count) with the landscape built from it.
pub fn dropped(file_name: &str, bytes: &[u8]) -> Result<(LandscapeSource, Arc<Landscape>), String> {
    let name: String = file_name.chars().take(MAX_NAME_CHARS).collect();
    let name = if name.trim().is_empty() { "cache.json".to_string() } else { name };
    let text = kernel_tuner::text_of(bytes).map_err(|e| format!("'{}': {e}", clip(&name)))?;
    let digest = sha256_hex(text.as_bytes());
    let cache = KernelTunerCache::parse(&text).map_err(|e| format!("'{}' is not a Kernel Tuner cache: {e}", clip(&name)))?;
    let source = LandscapeSource::KernelTuner(KernelTunerSource::Dropped(DroppedCache { name, digest: digest.clone(), configs: cache.len() }));
    Ok((source.clone(), Arc::new(Landscape::new(source, Kind::Cache { cache, digest }))))
}

impl Landscape {
    fn new(source: LandscapeSource, kind: Kind) -> Landscape {
        let mut land = Landscape { source, kind, best: None };
        land.best = land.find_optimum();
        land
    }

    /// Builds the scenario's landscape. A cache source needs the cache file's `bytes` (.json or
    /// .json.gz, at most `kernel_tuner::MAX_CACHE_BYTES` once decompressed); a dropped one must
    /// have the digest the scenario records. A toy source ignores `bytes`.
    pub fn build(s: &Scenario, bytes: Option<&[u8]>) -> Result<Arc<Landscape>, String> {
        let source = source_of(s)?;
        check_source(source)?;
        let kind = match source {
            LandscapeSource::Toy(t) => Kind::Toy(Toy::new(t)?),
            LandscapeSource::KernelTuner(k) => {
                let label = match k {
                    KernelTunerSource::Bundled(n) => format!("bundled cache '{n}' ({})", bundled_file(n).unwrap_or("?")),
                    KernelTunerSource::Dropped(d) => format!("dropped cache '{}'", clip(&d.name)),
                };
                let Some(bytes) = bytes else {
                    return Err(match k {
                        KernelTunerSource::Bundled(n) => format!(
                            "landscape.kernel_tuner.bundled: the {label} must be loaded first (the app fetches it; the CLI reads assets/kernel-tuner/{}, or give --cache FILE)",
                            bundled_file(n).unwrap_or("?")
                        ),
                        KernelTunerSource::Dropped(d) => format!("landscape.kernel_tuner.dropped: {}", drop_again(d)),
                    });
                };
                let text = kernel_tuner::text_of(bytes).map_err(|e| format!("{label}: {e}"))?;
                let digest = sha256_hex(text.as_bytes());
                if let KernelTunerSource::Bundled(n) = k {
                    let want = bundled_digest(n).unwrap_or("");
                    if digest != want {
                        return Err(format!(
                            "landscape.kernel_tuner.bundled: the file given for the {label} is not the one this build ships (its SHA-256 is {digest}, expected {want})"
                        ));
                    }
                }
                if let KernelTunerSource::Dropped(d) = k {
                    if d.digest != digest {
                        return Err(format!(
                            "landscape.kernel_tuner.dropped: the file given is not the '{}' this scenario was made with (its SHA-256 is {}, the scenario records {}); {}",
                            clip(&d.name),
                            digest,
                            d.digest,
                            drop_again(d)
                        ));
                    }
                }
                let cache = KernelTunerCache::parse(&text).map_err(|e| format!("{label} is not a Kernel Tuner cache: {e}"))?;
                Kind::Cache { cache, digest }
            }
        };
        Ok(Arc::new(Landscape::new(source.clone(), kind)))
    }

    /// The source it was built from.
    pub fn source(&self) -> &LandscapeSource {
        &self.source
    }

    /// The search space: the cached configurations, or the grid.
    pub fn space(&self) -> &Space {
        match &self.kind {
            Kind::Cache { cache, .. } => &cache.space,
            Kind::Toy(t) => &t.space,
        }
    }

    /// The one metric: the cache's objective with its unit ("time", ms, minimised), or "f".
    pub fn metric(&self) -> Metric {
        match &self.kind {
            Kind::Cache { cache, .. } => cache.metric(),
            Kind::Toy(_) => Metric::minimize("f", ""),
        }
    }

    /// The loaded cache (None for a toy landscape).
    pub fn cache(&self) -> Option<&KernelTunerCache> {
        match &self.kind {
            Kind::Cache { cache, .. } => Some(cache),
            Kind::Toy(_) => None,
        }
    }

    /// SHA-256 of the cache's JSON text (None for a toy landscape).
    pub fn digest(&self) -> Option<&str> {
        match &self.kind {
            Kind::Cache { digest, .. } => Some(digest),
            Kind::Toy(_) => None,
        }
    }

    /// Evaluates a configuration: the cache lookup (a failed measurement fails, as in Kernel
    /// Tuner), or the function at the grid point. The study's objective calls exactly this.
    pub fn evaluate(&self, c: &Config) -> Outcome {
        match &self.kind {
            Kind::Cache { cache, .. } => match cache.lookup(c) {
                Some(Some(v)) => Outcome::Ok(vec![v]),
                Some(None) => Outcome::Failed("the cached measurement failed".into()),
                None => Outcome::Infeasible("not a cached configuration".into()),
            },
            Kind::Toy(t) => match t.index(c) {
                Some(i) => Outcome::Ok(vec![t.values[i]]),
                None => Outcome::Infeasible("not a point of the grid".into()),
            },
        }
    }

    /// Every point with its value (None: a failed measurement): the cache's configurations in
    /// the space's order, or the grid row-major (y outer, x inner; see `grid`).
    pub fn all_points(&self) -> Vec<(Config, Option<f64>)> {
        match &self.kind {
            Kind::Cache { cache, .. } => cache.space.members().unwrap_or(&[]).iter().map(|c| (c.clone(), cache.lookup(c).flatten())).collect(),
            Kind::Toy(t) => {
                let n = t.xs.len();
                t.values.iter().enumerate().map(|(i, v)| (Config(vec![Value::Float(t.xs[i % n]), Value::Float(t.ys[i / n])]), Some(*v))).collect()
            }
        }
    }

    /// The grid of a toy landscape: x values, y values and f row-major (index iy * nx + ix),
    /// for drawing the whole surface. None for a cache.
    pub fn grid(&self) -> Option<(&[f64], &[f64], &[f64])> {
        match &self.kind {
            Kind::Toy(t) => Some((&t.xs, &t.ys, &t.values)),
            Kind::Cache { .. } => None,
        }
    }

    /// The true optimum: the best measured configuration (ties: the first in the space's
    /// order), or the grid's minimum (ties: the first row-major). None when every
    /// measurement failed.
    pub fn optimum(&self) -> Option<(Config, f64)> {
        self.best.clone()
    }

    fn find_optimum(&self) -> Option<(Config, f64)> {
        let m = self.metric();
        let mut best: Option<(Config, f64)> = None;
        let mut consider = |c: &Config, v: f64| {
            if best.as_ref().is_none_or(|b| m.signed(v) < m.signed(b.1)) {
                best = Some((c.clone(), v));
            }
        };
        match &self.kind {
            Kind::Cache { cache, .. } => {
                for c in cache.space.members().unwrap_or(&[]) {
                    if let Some(Some(v)) = cache.lookup(c) {
                        consider(c, v);
                    }
                }
            }
            Kind::Toy(t) => {
                let n = t.xs.len();
                for (i, v) in t.values.iter().enumerate() {
                    consider(&Config(vec![Value::Float(t.xs[i % n]), Value::Float(t.ys[i / n])]), *v);
                }
            }
        }
        best
    }

    /// How far a found value is from the optimum: found/optimum when minimised (optimum/found
    /// when maximised); 1 is the optimum. For a toy landscape, whose optimum may be 0, it is
    /// the gap found - optimum instead (0 is the optimum).
    pub fn ratio(&self, found: f64) -> Option<f64> {
        match &self.kind {
            Kind::Cache { cache, .. } => cache.ratio(found),
            Kind::Toy(_) => self.best.as_ref().map(|(_, o)| found - o),
        }
    }

    /// What `ratio` means, for labels: "best / optimum" or "best - optimum".
    pub fn ratio_label(&self) -> &'static str {
        match &self.kind {
            Kind::Cache { cache, .. } if !cache.minimize => "optimum / best",
            Kind::Cache { .. } => "best / optimum",
            Kind::Toy(_) => "best - optimum",
        }
    }

    /// A one-line title: "Kernel Tuner cache convolution_MI250X: convolution_kernel on AMD
    /// Instinct MI250X" or "Branin function on a 64 x 64 grid".
    pub fn title(&self) -> String {
        match (&self.kind, &self.source) {
            (Kind::Toy(t), _) => format!("{} function on a {} x {} grid", capitalise(t.function.name), t.xs.len(), t.ys.len()),
            (Kind::Cache { cache, .. }, LandscapeSource::KernelTuner(k)) => {
                let name = match k {
                    KernelTunerSource::Bundled(n) => n.clone(),
                    KernelTunerSource::Dropped(d) => clip(&d.name),
                };
                let on = match (cache.kernel_name.is_empty(), cache.device_name.is_empty()) {
                    (false, false) => format!(": {} on {}", clip(&cache.kernel_name), clip(&cache.device_name)),
                    (false, true) => format!(": {}", clip(&cache.kernel_name)),
                    (true, false) => format!(" on {}", clip(&cache.device_name)),
                    (true, true) => String::new(),
                };
                format!("Kernel Tuner cache {name}{on}")
            }
            (Kind::Cache { .. }, _) => "Kernel Tuner cache".into(),
        }
    }

    /// What the landscape is, for the run's notes.
    pub fn describe(&self) -> String {
        match &self.kind {
            Kind::Toy(t) => format!(
                "{}. {} ({} points, evaluated whole: the surface can be drawn and its minimum is known).",
                self.title(),
                t.function.description,
                t.values.len()
            ),
            Kind::Cache { cache, .. } => format!(
                "{}: {} measured configurations, {} of which failed; replayed as Kernel Tuner's simulation mode does (a failed configuration costs an evaluation). Values are measurements from the file, not Tunelab's device model.",
                self.title(),
                cache.len(),
                cache.failed()
            ),
        }
    }

    /// The reference ("before") point of the report: the first configuration of the space in
    /// its order (a cache records no default; the grid's corner for a toy).
    fn reference(&self) -> Config {
        match &self.kind {
            Kind::Cache { cache, .. } => cache.space.members().and_then(|m| m.first().cloned()).unwrap_or(Config(Vec::new())),
            Kind::Toy(t) => Config(vec![Value::Float(t.xs[0]), Value::Float(t.ys[0])]),
        }
    }
}

pub(super) fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
}

impl Toy {
    fn new(t: &ToySpec) -> Result<Toy, String> {
        let function = toy_function(&t.function).ok_or_else(|| unknown_function(&t.function))?;
        let n = t.resolution;
        let (xs, ys) = (axis(function.x.0, function.x.1, n), axis(function.y.0, function.y.1, n));
        let values: Vec<f64> = ys.iter().flat_map(|&y| xs.iter().map(move |&x| (function.f)(x, y))).collect();
        let params = vec![
            Param::categorical("x", xs.iter().map(|&v| Value::Float(v)).collect()),
            Param::categorical("y", ys.iter().map(|&v| Value::Float(v)).collect()),
        ];
        let space = Space::new(params, &[])?;
        Ok(Toy { function, xs, ys, space, values })
    }

    /// Row-major index of a grid point.
    fn index(&self, c: &Config) -> Option<usize> {
        if c.len() != 2 {
            return None;
        }
        let ix = self.space.params()[0].level_of(c.get(0))?;
        let iy = self.space.params()[1].level_of(c.get(1))?;
        Some(iy * self.xs.len() + ix)
    }
}

/// The stage objective: the landscape's `evaluate`.
pub struct LandscapeObjective {
    land: Arc<Landscape>,
}

impl Objective for LandscapeObjective {
    fn metrics(&self) -> Vec<Metric> {
        vec![self.land.metric()]
    }
    fn evaluate(&mut self, config: &Config) -> Outcome {
        self.land.evaluate(config)
    }
}

/// The stage for a built landscape (before the generic goal and constraint layer).
pub fn stage(s: &Scenario, land: Arc<Landscape>) -> Result<StageSetup, String> {
    if s.stage != Stage::Landscape {
        return Err(format!("a landscape was given for a {} scenario", s.stage.name()));
    }
    if s.landscape.as_ref() != Some(land.source()) {
        return Err("the landscape given was built from another source than the scenario's 'landscape'".into());
    }
    // The scenario's slice of a cache (`space` entries), or the whole landscape.
    let space = slice_space(s, &land)?;
    let reference = land.reference();
    let baseline = if space.contains(&reference) { reference } else { space.members().and_then(|m| m.first().cloned()).unwrap_or(reference) };
    Ok(StageSetup {
        space,
        metrics: vec![land.metric()],
        baseline,
        focus: Vec::new(),
        focus_budget: 0,
        notes: vec![land.describe()],
        objective: Box::new(LandscapeObjective { land }),
    })
}

thread_local! {
    /// The landscape this thread loaded last (`remember`): the page's, once it has parsed a
    /// cache. The page has many views that build the stage from the scenario alone (pins, the
    /// heat map, a point's detail, the guards); with the cache remembered here they price the
    /// same loaded values the study did, instead of asking for a file the page already has.
    static LOADED: std::cell::RefCell<Option<Arc<Landscape>>> = const { std::cell::RefCell::new(None) };
}

/// Makes `land` what `setup` uses for a scenario with the same source (replacing the last one).
/// A source names its data exactly (a bundled cache's name, a dropped file's SHA-256, a toy's
/// spec), so a remembered landscape is never another file's.
pub fn remember(land: Arc<Landscape>) {
    LOADED.with(|l| *l.borrow_mut() = Some(land));
}

/// The stage from the scenario alone: toy landscapes build themselves, a cache is the one this
/// thread remembers for the same source (`remember`), and otherwise the error says which file is
/// needed (callers with the bytes use `Landscape::build`).
pub fn setup(s: &Scenario) -> Result<StageSetup, String> {
    let known = LOADED.with(|l| l.borrow().as_ref().filter(|land| s.landscape.as_ref() == Some(land.source())).cloned());
    match known {
        Some(land) => stage(s, land),
        None => stage(s, Landscape::build(s, None)?),
    }
}
