//! The views' questions the engine answers (diagnosis, guards, what-if, a stage's shape, the
//! Calibrate panel's comparison and fit), as plain serde data, and the one function that
//! answers them.
//!
//! Why here: the page's module carries no engine (its first load stays small, and its thread
//! computes nothing heavy); an engine worker answers with `answer`, the same library functions
//! `tunelab diagnose`, `tunelab guards`, `tunelab impact` and `tunelab calibrate` call, so the
//! numbers are the CLI's. Where the page may compute (Cargo feature `page-engine` of the app:
//! the component tests), it calls `answer` itself: one code path either way.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use tunelab_scenario::calibrate::{Calibration, Calibrator, Options};
use tunelab_scenario::diagnosis::Weights;
use tunelab_scenario::fidelity::{FidelityReport, MeasurementSet};
use tunelab_scenario::guards::GuardsReport;
use tunelab_scenario::impact::{Change, ImpactReport, ImpactWeights};
use tunelab_scenario::run::RunShape;
use tunelab_scenario::Scenario;
use tunelab_search::Config;

/// A question from a view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Question {
    /// The stage's parameters, metrics and baseline (`stages::setup`): Explore's axes, parsing a
    /// typed configuration, the goal's choices.
    Shape { scenario: Box<Scenario> },
    /// `diagnosis::diagnose` of `config` (None: the baseline).
    Diagnose { scenario: Box<Scenario>, config: Option<Config> },
    /// `guards::check_all` on `config` (None: the baseline).
    /// `names`: the configuration's parameter names as the page knows them (a landscape's, whose
    /// stage the worker cannot build without the cache's bytes).
    Guards { scenario: Box<Scenario>, config: Option<Config>, names: Vec<String>, chip: Option<String>, protect: Vec<String> },
    /// `impact::analyse`: one change at every stage.
    Impact { scenario: Box<Scenario>, change: Change, weights: ImpactWeights },
    /// `fidelity::load_any` of a dropped file (measurements JSON or an msprof op summary).
    Measurements { text: String, name: String, chip: String },
    /// `fidelity::evaluate`: the rows priced with `profile` (a chip's profile JSON); only the
    /// chip's rows unless `family`.
    Fidelity { set: Box<MeasurementSet>, chip: String, profile: Json, family: bool },
    /// The diffusion pipeline's timeline (`stages::diffusion::timeline`) of each configuration
    /// (None: the baseline).
    Timeline { scenario: Box<Scenario>, configs: Vec<Option<Config>> },
    /// `calibrate::Calibrator` run to the end.
    Fit { set: Box<MeasurementSet>, digest: String, chip: String, profile: Json, options: Options },
    /// `analyses::plan`: the fewest chips for a load, with the plan's launch.
    Plan { request: Box<tunelab_scenario::analyses::plan::PlanRequest> },
    /// `stages::capacity::spread::headline`: the goal of `config` over other request samples.
    Spread { scenario: Box<Scenario>, config: Config },
    /// `tunelab_sim::load_model` of model text (a bundled model's config or a pasted / uploaded
    /// one): the model banner and the model check before a paste is applied. The page's module
    /// carries no model reader.
    Model { text: String },
    /// `report::model_parts`: what the report reads from the model (identity lines, a
    /// deployment's export) for the best configuration `best` (by parameter name).
    ReportModel { scenario: Box<Scenario>, best: BTreeMap<String, tunelab_search::Value>, has_best: bool },
    /// `cases::fingerprint_of`: the knowledge base's key of a scenario (reads the model).
    Fingerprint { scenario: Box<Scenario> },
    /// `evidence::benchruns`: benchmark tools' files (name, text) read (`format`: auto, vllm,
    /// sglang, aisbench, mindie; `rate`: req/s or "inf" for runs whose files lack it), made
    /// measurement rows over the launch `scenario` and priced by the fidelity path.
    /// `serve`: the serving command the runs were measured on (`benchruns::serve::launch`),
    /// pinning the deployment over `scenario`.
    BenchRuns {
        files: Vec<(String, String)>,
        format: String,
        rate: Option<String>,
        scenario: Box<Scenario>,
        #[serde(default)]
        serve: Option<String>,
    },
    /// `benchruns::calibrate::calibrate_framework`: the framework layer fitted to the rows.
    BenchFit { set: Box<MeasurementSet>, digest: String, options: Options },
    /// `templates::bundled_templates`: the template menu (name, title, description). The page's
    /// module links no template (its first load, issue 46's 1 MiB).
    Templates,
    /// `templates::preview` of the bundled template `name` on `scenario`: the scenario it makes
    /// and its "path: before → after" lines.
    TemplatePreview { scenario: Box<Scenario>, name: String },
    /// `tunelab_sim::bundled_device(name).to_json()`: a bundled chip's whole profile as the
    /// scenario panel's editor shows it. The page's module links no device reader.
    DeviceProfile { name: String },
    /// `tunelab_sim::Device::from_json` of an edited profile: Ok when it loads (as
    /// `tunelab run` would read it), else the reader's error.
    DeviceCheck { text: String },
}

/// One bundled template as the page's menu shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TemplateInfo {
    pub name: String,
    pub title: String,
    pub description: String,
}

/// What `Question::Model` reads from a model: the loader's warnings and, for a language model,
/// the banner's lines (`ModelDesc::identity_line`, `stack_summary`, `approximations`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelFacts {
    pub warnings: Vec<String>,
    /// (identity line, layer stack, approximations); None for a model with no language model.
    pub identity: Option<(String, String, Vec<String>)>,
}

/// `Question::Model`'s answer: the facts, or why the model does not load.
pub fn model_facts(text: &str) -> Result<ModelFacts, String> {
    // A bundled model comes as its id (the page links no model text); it is read from the same
    // text the stages read, so the facts are those of `load_model` on it.
    let text = if text.trim_start().starts_with('{') { text } else { tunelab_sim::bundled_model_text(text).ok_or_else(|| format!("no bundled model '{}'", text.trim()))? };
    let loaded = tunelab_sim::load_model(text)?;
    let m = &loaded.model;
    Ok(ModelFacts { warnings: loaded.warnings.clone(), identity: m.llm.is_some().then(|| (m.identity_line(), m.stack_summary(), m.approximations())) })
}

/// The answer to a `Question` (same order of variants). Externally tagged, as `FromWorker`
/// (see there: no buffered second reader of every report in the page's module).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Shape { shape: RunShape },
    /// The diagnosis as the panel shows it (`views::DiagnosisView`, from `diagnosis_text`).
    Diagnose { view: Box<crate::views::DiagnosisView> },
    Guards { report: GuardsReport },
    Impact { report: ImpactReport },
    /// The set, how many operators of an op summary are not modelled, and the text's digest.
    Measurements { set: MeasurementSet, skipped: usize, digest: String },
    Fidelity { report: FidelityReport },
    Timeline { timelines: Vec<Result<tunelab_scenario::stages::diffusion::timeline::Timeline, String>> },
    Fit { calibration: Calibration },
    Plan { plan: Box<tunelab_scenario::analyses::plan::Plan>, launch: Option<tunelab_scenario::stages::scale::launch::Launch> },
    Spread { spread: Option<tunelab_scenario::stages::capacity::spread::Spread> },
    Model { facts: ModelFacts },
    ReportModel { parts: tunelab_scenario::report::ModelParts },
    Fingerprint { fingerprint: tunelab_scenario::knowledge::Fingerprint },
    /// The runs read, their rows (with the set's digest) and the rows priced.
    /// `launch`: what the serving command set and what it did not price (empty without one).
    BenchRuns { runs: Vec<tunelab_scenario::evidence::benchruns::BenchRun>, set: MeasurementSet, digest: String, report: FidelityReport, launch: Vec<String> },
    BenchFit { fit: tunelab_scenario::evidence::benchruns::calibrate::FrameworkFit },
    Templates { templates: Vec<TemplateInfo> },
    TemplatePreview { title: String, next: Box<Scenario>, lines: Vec<String> },
    DeviceProfile { text: String },
    DeviceCheck,
}

/// Answers a question (errors name what was wrong).
pub fn answer(q: Question) -> Result<Answer, String> {
    match q {
        Question::Shape { scenario } => {
            let st = tunelab_scenario::setup(&scenario)?;
            Ok(Answer::Shape { shape: RunShape { params: st.space.params().to_vec(), metrics: st.metrics, baseline: st.baseline, notes: st.notes, focus: st.focus, focus_budget: st.focus_budget } })
        }
        Question::Diagnose { scenario, config } => tunelab_scenario::diagnosis::diagnose(&scenario, config.as_ref(), Weights::default()).map(|d| Answer::Diagnose { view: Box::new(crate::views::DiagnosisView::of(&d)) }),
        Question::Guards { scenario, config, names, chip, protect } => {
            if scenario.stage == tunelab_scenario::Stage::Landscape {
                // Nothing to re-price on measured values (the report says so).
                let cfg = config.unwrap_or_else(|| Config(Vec::new()));
                return tunelab_scenario::guards::check_all(&scenario, &names, &cfg, None, &protect).map(|report| Answer::Guards { report });
            }
            let st = tunelab_scenario::setup(&scenario)?;
            let names = st.space.names().to_vec();
            let cfg = config.unwrap_or_else(|| st.baseline.clone());
            tunelab_scenario::guards::check_all(&scenario, &names, &cfg, chip.as_deref().filter(|c| !c.is_empty()), &protect).map(|report| Answer::Guards { report })
        }
        Question::Impact { scenario, change, weights } => tunelab_scenario::impact::analyse(&scenario, &change, weights).map(|report| Answer::Impact { report }),
        Question::Measurements { text, name, chip } => {
            let (set, skipped) = tunelab_scenario::fidelity::load_any(&text, &name, &chip)?;
            Ok(Answer::Measurements { set, skipped: skipped.len(), digest: MeasurementSet::digest_of(&text) })
        }
        Question::Fidelity { set, chip, profile, family } => {
            let only = (!family).then(|| vec![chip.clone()]);
            let devices: BTreeMap<String, Json> = [(chip, profile)].into_iter().collect();
            Ok(Answer::Fidelity { report: tunelab_scenario::fidelity::evaluate(&set, &devices, only.as_deref()) })
        }
        Question::Timeline { scenario, configs } => {
            let timelines = configs.iter().map(|c| tunelab_scenario::stages::diffusion::timeline::timeline(&scenario, c.as_ref())).collect();
            Ok(Answer::Timeline { timelines })
        }
        Question::Plan { request } => {
            let plan = tunelab_scenario::analyses::plan::plan(&request)?;
            let launch = plan.best.as_ref().map(|b| tunelab_scenario::report::export_for(&b.scenario, &b.config).launch);
            Ok(Answer::Plan { plan: Box::new(plan), launch })
        }
        Question::Spread { scenario, config } => {
            let st = tunelab_scenario::setup(&scenario)?;
            tunelab_scenario::stages::capacity::spread::headline(&scenario, st.space.names(), &config).map(|spread| Answer::Spread { spread })
        }
        Question::Model { text } => model_facts(&text).map(|facts| Answer::Model { facts }),
        Question::ReportModel { scenario, best, has_best } => Ok(Answer::ReportModel { parts: tunelab_scenario::report::model_parts(&scenario, &best, has_best) }),
        Question::Fingerprint { scenario } => tunelab_scenario::cases::fingerprint_of(&scenario).map(|fingerprint| Answer::Fingerprint { fingerprint }),
        Question::BenchRuns { files, format, rate, scenario, serve } => bench_runs(&files, &format, rate.as_deref(), &scenario, serve.as_deref()),
        Question::BenchFit { set, digest, options } => tunelab_scenario::evidence::benchruns::calibrate::calibrate_framework(&set, &digest, &options).map(|fit| Answer::BenchFit { fit }),
        Question::Templates => Ok(Answer::Templates {
            templates: tunelab_scenario::templates::bundled_templates().into_iter().map(|t| TemplateInfo { name: t.name, title: t.title, description: t.description }).collect(),
        }),
        Question::TemplatePreview { scenario, name } => {
            let t = tunelab_scenario::templates::bundled_templates().into_iter().find(|t| t.name == name).ok_or_else(|| format!("no bundled template '{name}'"))?;
            let (next, lines) = tunelab_scenario::templates::preview(&t, &scenario).map_err(|e| format!("Template '{}': {e}", t.title))?;
            Ok(Answer::TemplatePreview { title: t.title, next: Box::new(next), lines })
        }
        Question::DeviceProfile { name } => tunelab_sim::bundled_device(&name).map(|d| Answer::DeviceProfile { text: d.to_json() }),
        Question::DeviceCheck { text } => tunelab_sim::Device::from_json(&text).map(|_| Answer::DeviceCheck),
        Question::Fit { set, digest, chip, profile, options } => {
            let mut c = Calibrator::new(&set, &digest, &chip, &profile, &options)?;
            while !c.step(64) {}
            c.finish().map(|calibration: Calibration| Answer::Fit { calibration })
        }
    }
}

/// `Question::BenchRuns`: what `tunelab benchrun` does with the same files.
fn bench_runs(files: &[(String, String)], format: &str, rate: Option<&str>, scenario: &Scenario, serve: Option<&str>) -> Result<Answer, String> {
    use tunelab_scenario::evidence::benchruns::{self, Format};
    let (launch_scenario, launch) = match serve.map(str::trim).filter(|c| !c.is_empty()) {
        Some(cmd) => {
            let l = benchruns::serve::launch(cmd, scenario).map_err(|e| format!("serving command: {e}"))?;
            let mut notes = vec![format!("checked against {}", l.release)];
            notes.extend(l.read);
            if !l.not_priced.is_empty() {
                notes.push(format!("not priced: {}", l.not_priced.join(", ")));
            }
            (l.scenario, notes)
        }
        None => (scenario.clone(), Vec::new()),
    };
    let scenario = &launch_scenario;
    let rate = match rate.map(str::trim).filter(|r| !r.is_empty()) {
        None => None,
        Some("inf") => Some(None),
        Some(r) => Some(Some(r.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0).ok_or_else(|| format!("rate '{r}': a positive number of requests per second, or inf"))?)),
    };
    let mut runs = benchruns::read_files(files, Format::parse(format)?)?;
    if let Some(r) = rate {
        runs = runs.into_iter().map(|x| x.with_rate(r, false)).collect::<Result<_, _>>()?;
    }
    let set = benchruns::measurement_set(&runs, scenario, "benchmark files")?;
    let digest = MeasurementSet::digest_of(&serde_json::to_string(&set).map_err(|e| e.to_string())?);
    let report = tunelab_scenario::fidelity::evaluate(&set, &BTreeMap::new(), None);
    Ok(Answer::BenchRuns { runs, set, digest, report, launch })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A question and its answer cross the JSON boundary unchanged (floats bit for bit).
    #[test]
    fn shape_and_diagnosis_round_trip_as_json() {
        let s = tunelab_scenario::bundled_scenario("llama2-7b-910B2-deployment").unwrap();
        for q in [Question::Shape { scenario: Box::new(s.clone()) }, Question::Diagnose { scenario: Box::new(s.clone()), config: None }] {
            let text = serde_json::to_string(&q).unwrap();
            let back: Question = serde_json::from_str(&text).unwrap();
            assert_eq!(back, q);
            let a = answer(back).unwrap();
            let again: Answer = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
            assert_eq!(again, a);
        }
        // The shape is the stage's: the run built natively has the same parameters and baseline.
        let Answer::Shape { shape } = answer(Question::Shape { scenario: Box::new(s.clone()) }).unwrap() else { panic!() };
        let run = tunelab_scenario::Run::new(&s).unwrap();
        assert_eq!(shape.params, run.space().params());
        assert_eq!(&shape.baseline, run.baseline_config());
    }

    /// The benchmark-file questions answer what the CLI prints: every sample file read, its
    /// rows priced, and a framework fit with leave-one-source-out errors.
    #[test]
    fn benchmark_files_are_read_priced_and_fitted() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/benchruns");
        let files: Vec<(String, String)> = ["vllm-bench-serve-sample.json", "sglang-bench-serving-sample.jsonl", "aisbench/gsm8k.json", "aisbench/gsm8k.csv"].iter().map(|p| (p.to_string(), std::fs::read_to_string(format!("{dir}/{p}")).unwrap())).collect();
        let s = tunelab_scenario::bundled_scenario("llama2-7b-910B2-deployment").unwrap();
        let q = Question::BenchRuns { files: files.clone(), format: "auto".into(), rate: None, scenario: Box::new(s.clone()), serve: None };
        let e = answer(q).unwrap_err();
        assert!(e.contains("--rate"), "the AISBench run needs its rate: {e}");
        let bad = Question::BenchRuns { files: files.clone(), format: "auto".into(), rate: Some("inf".into()), scenario: Box::new(s.clone()), serve: Some("vllm serve llama-2-7b --tp-sise 2".into()) };
        assert!(answer(bad).unwrap_err().contains("--tp-sise"));
        let q = Question::BenchRuns { files, format: "auto".into(), rate: Some("inf".into()), scenario: Box::new(s), serve: Some("vllm serve meta-llama/Llama-2-7b-hf --max-num-seqs 16 --port 8000".into()) };
        let Answer::BenchRuns { runs, set, digest, report, launch } = answer(serde_json::from_str(&serde_json::to_string(&q).unwrap()).unwrap()).unwrap() else { panic!() };
        assert_eq!(runs.len(), 5);
        assert!(launch.iter().any(|l| l.contains("batch (max running requests) 16")) && launch.iter().any(|l| l.contains("not priced: --port 8000")), "{launch:?}");
        assert_eq!(report.summary.rows_covered, 5);
        let opts = Options { budget: 12, loo_budget: 4, ..Options::default() };
        let Answer::BenchFit { fit } = answer(Question::BenchFit { set: Box::new(set), digest, options: opts }).unwrap() else { panic!() };
        assert_eq!(fit.engine, "vllm-ascend", "the command's engine");
        assert!(fit.calibration.median_abs_error_loo.is_some());
    }
}
