//! The run's progress bar: evaluations out of the budget, with ARIA progressbar semantics.

use leptos::prelude::*;

use super::svg::{esc, px};

/// Percentage of the budget used, clamped to [0, 100]; 0 for an empty budget.
pub fn progress_percent(done: usize, budget: usize) -> f64 {
    if budget == 0 {
        0.0
    } else {
        (100.0 * done as f64 / budget as f64).clamp(0.0, 100.0)
    }
}

/// The text read out and shown: "12 of 100 evaluations (12%)".
pub fn progress_text(done: usize, budget: usize) -> String {
    let pct = progress_percent(done, budget);
    if budget == 0 {
        format!("{done} evaluations")
    } else {
        format!("{done} of {budget} evaluations ({}%)", pct.floor())
    }
}

/// The progress bar as standalone SVG text (for exports next to the charts).
pub fn to_svg_string(done: usize, budget: usize, label: &str) -> String {
    let w = 320.0;
    let fill = 3.0 + (w - 6.0) * progress_percent(done, budget) / 100.0;
    let text = progress_text(done, budget);
    let name = if label.is_empty() { "Progress".to_string() } else { label.to_string() };
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"tl-svg tl-progress-svg\" viewBox=\"0 0 320 40\" width=\"320\" height=\"40\" role=\"img\" aria-label=\"{n}: {t}\" font-family=\"system-ui, sans-serif\" font-size=\"12\"><title>{n}: {t}</title>\
         <rect x=\"0\" y=\"0\" width=\"320\" height=\"20\" rx=\"4\" fill=\"#ddd\"/><rect x=\"3\" y=\"3\" width=\"{f}\" height=\"14\" rx=\"3\" fill=\"#0072B2\"/>\
         <text x=\"0\" y=\"36\" fill=\"currentColor\">{t}</text></svg>",
        n = esc(&name),
        t = esc(&text),
        f = px(fill - 3.0)
    )
}

/// A progress bar for a run: `role="progressbar"` with aria-valuemin/max/now and a text.
#[component]
pub fn ProgressBar(
    /// Evaluations done so far.
    #[prop(into)]
    done: Signal<usize>,
    /// The evaluation budget (0 = unknown: the bar stays empty and the text gives the count).
    #[prop(into)]
    budget: Signal<usize>,
    /// Accessible name, e.g. "Tuning progress (genetic)".
    #[prop(optional, into)]
    label: String,
) -> impl IntoView {
    let label = if label.is_empty() { "Tuning progress".to_string() } else { label };
    let pct = move || progress_percent(done.get(), budget.get());
    let text = move || progress_text(done.get(), budget.get());
    view! {
        <div class="tl-progress">
            <div
                class="tl-progress-track"
                role="progressbar"
                aria-label=label
                aria-valuemin="0"
                aria-valuemax=move || budget.get().to_string()
                aria-valuenow=move || done.get().min(budget.get()).to_string()
                aria-valuetext=text
                style="background:#ddd;border-radius:4px;height:0.8em;overflow:hidden"
            >
                <div class="tl-progress-bar" style=move || format!("background:#0072B2;height:100%;width:{}%", px(pct()))></div>
            </div>
            <span class="tl-progress-label">{text}</span>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_is_clamped_and_safe() {
        assert_eq!(progress_percent(0, 0), 0.0);
        assert_eq!(progress_percent(5, 10), 50.0);
        assert_eq!(progress_percent(15, 10), 100.0);
        assert_eq!(progress_text(12, 100), "12 of 100 evaluations (12%)");
        assert_eq!(progress_text(3, 0), "3 evaluations");
        assert_eq!(progress_text(2, 3), "2 of 3 evaluations (66%)");
    }

    #[test]
    fn svg_export_escapes_label() {
        let s = to_svg_string(5, 10, "<b>x</b>");
        assert!(s.contains("&lt;b&gt;x&lt;/b&gt;: 5 of 10 evaluations (50%)") && !s.contains("<b>"));
        assert!(s.contains("width=\"157\""));
    }
}
