//! A heat map over two parameters' values: colour = objective value, infeasible cells grey and
//! hatched with the reason in the tooltip; cells are clickable and keyboard-focusable.

use leptos::prelude::*;
use leptos::wasm_bindgen::JsCast;

use super::axes::{self, truncate, Frame, Swatch};
use super::scale::{extent, format_num};
use super::svg::{viridis, Svg, INFEASIBLE};

/// One cell of the grid.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HeatCell {
    /// Objective value (NaN = not evaluated).
    pub value: f64,
    /// Why the configuration is infeasible, e.g. "does not fit L0A (80 KiB > 64 KiB)".
    pub infeasible: Option<String>,
}

/// Everything the heat map shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HeatmapData {
    /// Chart title.
    pub title: String,
    /// X parameter name (columns).
    pub x_label: String,
    /// Y parameter name (rows).
    pub y_label: String,
    /// Objective with unit, e.g. "latency (µs)".
    pub value_label: String,
    /// Column values as text (e.g. "16", "32", ...).
    pub x_values: Vec<String>,
    /// Row values as text; row 0 is drawn at the bottom.
    pub y_values: Vec<String>,
    /// `cells[row][column]`; missing cells read "not evaluated".
    pub cells: Vec<Vec<HeatCell>>,
    /// Lower is better (the brightest colour then marks the lowest value).
    pub minimize: bool,
    /// The selected cell as (column, row), outlined.
    pub selected: Option<(usize, usize)>,
}

/// Chart size in pixels.
pub const SIZE: (f64, f64) = (560.0, 420.0);

/// Largest grid drawn (per side); bigger grids are cut and the cut is noted.
pub const MAX_SIDE: usize = 64;

fn cell(d: &HeatmapData, col: usize, row: usize) -> Option<&HeatCell> {
    d.cells.get(row).and_then(|r| r.get(col))
}

/// The heat map as standalone SVG text. Cells carry `data-cell="column,row"`.
pub fn to_svg_string(d: &HeatmapData) -> String {
    let f = Frame { left: 80.0, bottom: 52.0, ..Frame::new(SIZE.0, SIZE.1) }.with_right(150.0);
    let title = if d.title.is_empty() { "Search space" } else { &d.title };
    let (nx, ny) = (d.x_values.len().min(MAX_SIDE), d.y_values.len().min(MAX_SIDE));
    let desc = format!(
        "Grid of {} by {} over {} (columns) and {} (rows); colour shows {}; grey hatched cells are infeasible. Select a cell for its details.",
        nx, ny, d.x_label, d.y_label, d.value_label
    );
    let mut svg = Svg::interactive(f.width, f.height, "tl-heatmap", title, &desc);
    axes::title(&mut svg, &f, title);
    let (x0, _) = f.x_range();
    let (y0, y1) = f.y_range();
    if nx == 0 || ny == 0 {
        axes::note(&mut svg, &f, "No grid to show");
        return svg.finish();
    }
    let (cw, ch) = (f.plot_w() / nx as f64, f.plot_h() / ny as f64);
    let feasible_values = (0..ny).flat_map(|r| (0..nx).map(move |c| (c, r))).filter_map(|(c, r)| cell(d, c, r)).filter(|c| c.infeasible.is_none()).map(|c| c.value);
    let ve = extent(feasible_values);
    let t_of = |v: f64| match ve {
        Some((lo, hi)) if hi > lo => {
            let t = (v - lo) / (hi - lo);
            if d.minimize { 1.0 - t } else { t }
        }
        _ => 0.6,
    };
    let (mut n_infeasible, mut n_missing) = (0, 0);
    svg.open("g", &[("class", "tl-cells")]);
    for r in 0..ny {
        for c in 0..nx {
            let (x, y) = (x0 + c as f64 * cw, y0 - (r + 1) as f64 * ch);
            let at = format!("{}={}, {}={}", d.x_label, d.x_values[c], d.y_label, d.y_values[r]);
            let id = format!("{c},{r}");
            let sel = d.selected == Some((c, r));
            let class = if sel { "tl-cell tl-cell-selected" } else { "tl-cell" };
            let stroke = if sel { "currentColor" } else { "white" };
            let sw = if sel { "3" } else { "0.5" };
            let base = [("data-cell", id.as_str()), ("class", class), ("tabindex", "0"), ("stroke", stroke), ("stroke-width", sw)];
            match cell(d, c, r) {
                Some(HeatCell { infeasible: Some(why), .. }) => {
                    n_infeasible += 1;
                    let tip = format!("{at}: infeasible — {why}");
                    svg.rect(x, y, cw, ch, &[&base[..], &[("fill", INFEASIBLE), ("fill-opacity", "0.45")]].concat(), Some(&tip));
                    let hatch = [("stroke", "#555"), ("stroke-width", "1"), ("pointer-events", "none")];
                    svg.line(x, y + ch, x + cw, y, &hatch);
                    svg.line(x, y + ch / 2.0, x + cw / 2.0, y, &hatch);
                    svg.line(x + cw / 2.0, y + ch, x + cw, y + ch / 2.0, &hatch);
                }
                Some(HeatCell { value, .. }) if value.is_finite() => {
                    let t = t_of(*value);
                    let tip = format!("{at}: {} {}", d.value_label, format_num(*value));
                    svg.rect(x, y, cw, ch, &[&base[..], &[("fill", &viridis(t))]].concat(), Some(&tip));
                    if cw >= 34.0 && ch >= 16.0 {
                        let ink = if t < 0.55 { "white" } else { "black" };
                        let a = [("text-anchor", "middle"), ("font-size", "11.5"), ("fill", ink), ("pointer-events", "none")];
                        svg.text(x + cw / 2.0, y + ch / 2.0 + 3.5, &format_num(*value), &a);
                    }
                }
                _ => {
                    n_missing += 1;
                    let tip = format!("{at}: not evaluated");
                    svg.rect(x, y, cw, ch, &[&base[..], &[("fill", "#eeeeee")]].concat(), Some(&tip));
                }
            }
        }
    }
    svg.close("g");
    // Tick labels: every k-th value so they do not overlap.
    let kx = ((nx as f64 * 34.0 / f.plot_w()).ceil() as usize).max(1);
    for c in (0..nx).step_by(kx) {
        let x = x0 + (c as f64 + 0.5) * cw;
        svg.text(x, y0 + 15.0, &truncate(&d.x_values[c], 8), &[("text-anchor", "middle"), ("class", "tl-tick")]);
    }
    let ky = ((ny as f64 * 14.0 / f.plot_h()).ceil() as usize).max(1);
    for r in (0..ny).step_by(ky) {
        let y = y0 - (r as f64 + 0.5) * ch;
        svg.text(x0 - 6.0, y + 4.0, &truncate(&d.y_values[r], 10), &[("text-anchor", "end"), ("class", "tl-tick")]);
    }
    let (xl, _) = f.x_range();
    let xm = (xl + f.width - f.right) / 2.0;
    svg.text(xm, f.height - 10.0, &d.x_label, &[("text-anchor", "middle"), ("class", "tl-axis-label")]);
    let cy = (y0 + y1) / 2.0;
    let rot = format!("rotate(-90 14 {})", super::svg::px(cy));
    svg.text(14.0, cy, &d.y_label, &[("text-anchor", "middle"), ("transform", &rot), ("class", "tl-axis-label")]);
    if let Some((lo, hi)) = ve {
        axes::colour_bar(&mut svg, &f, lo, hi, &d.value_label, d.minimize);
    }
    let legend_f = Frame { top: f.height - 70.0, ..f };
    let entries = [(Swatch::Box(INFEASIBLE), format!("infeasible ({n_infeasible})")), (Swatch::Box("#eeeeee"), format!("not evaluated ({n_missing})"))];
    axes::legend(&mut svg, &legend_f, &entries);
    if d.x_values.len() > MAX_SIDE || d.y_values.len() > MAX_SIDE {
        svg.text(f.width - f.right, 17.0, &format!("grid cut to {MAX_SIDE} × {MAX_SIDE}"), &[("text-anchor", "end"), ("font-size", "11.5")]);
    }
    svg.finish()
}

/// Parses a `data-cell="column,row"` value.
pub fn parse_cell(s: &str) -> Option<(usize, usize)> {
    let (a, b) = s.split_once(',')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

fn cell_from_event(ev: &leptos::web_sys::Event) -> Option<(usize, usize)> {
    let el: leptos::web_sys::Element = ev.target()?.dyn_into().ok()?;
    let hit = el.closest("[data-cell]").ok()??;
    parse_cell(&hit.get_attribute("data-cell")?)
}

/// Heat map over two parameters; a click (or Enter/Space on a focused cell) calls
/// `on_select((column, row))`. The chosen cell keeps keyboard focus across the redraw that
/// a new selection causes.
#[component]
pub fn HeatmapChart(
    /// Grid values, labels and selection; updates redraw the map.
    #[prop(into)]
    data: Signal<HeatmapData>,
    /// Called with (column, row) of the chosen cell.
    #[prop(optional, into)]
    on_select: Option<Callback<(usize, usize)>>,
) -> impl IntoView {
    let root = NodeRef::<leptos::html::Div>::new();
    let refocus = StoredValue::new(None::<(usize, usize)>);
    let pick = move |ev: &leptos::web_sys::Event| {
        if let (Some(cb), Some(cell)) = (on_select, cell_from_event(ev)) {
            refocus.set_value(Some(cell));
            cb.run(cell);
        }
    };
    // The SVG is replaced on every change; give focus back to the cell the user chose.
    Effect::new(move |_| {
        data.track();
        if refocus.get_value().is_none() {
            return;
        }
        request_animation_frame(move || {
            let (Some((c, r)), Some(div)) = (refocus.get_value(), root.get_untracked()) else { return };
            refocus.set_value(None);
            // Only when the redraw dropped focus to the page: never steal it from elsewhere.
            let lost = document().active_element().is_none_or(|a| a.tag_name().eq_ignore_ascii_case("body"));
            if !lost {
                return;
            }
            if let Ok(Some(el)) = div.query_selector(&format!("[data-cell=\"{c},{r}\"]")) {
                // `focus` is looked up on the object, so this works for SVG elements too.
                let _ = el.unchecked_into::<leptos::web_sys::HtmlElement>().focus();
            }
        });
    });
    // The same text drawn and exported (through the one export path, `svg::download`).
    let text = Memo::new(move |_| data.with(to_svg_string));
    let ctx = use_context::<crate::state::Ctx>();
    let save = move |_| {
        if let Err(e) = super::svg::download("heatmap", &text.get_untracked()) {
            if let Some(c) = ctx {
                c.fail(format!("SVG export: {e}"));
            }
        }
    };
    view! {
        <div class="tl-chart-box">
        // The title, wrapping, where a phone scrolls the map inside its box (www/charts.css).
        <p class="tl-chart-caption" aria-hidden="true" data-testid="heatmap-caption">{move || text.with(|s| super::svg::svg_title(s))}</p>
        <div
            class="tl-chart tl-chart-heatmap"
            node_ref=root
            inner_html=move || text.get()
            on:click=move |ev| pick(&ev)
            on:keydown=move |ev| {
                let k = ev.key();
                if k == "Enter" || k == " " {
                    ev.prevent_default();
                    pick(&ev);
                }
            }
        ></div>
        <button class="svg-export" data-testid="svg-heatmap" title="Save this chart as SVG" on:click=save>"SVG"</button>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> HeatmapData {
        let ok = |v| HeatCell { value: v, infeasible: None };
        HeatmapData {
            x_label: "baseM".into(),
            y_label: "baseN".into(),
            value_label: "latency (µs)".into(),
            x_values: vec!["16".into(), "32".into()],
            y_values: vec!["16".into(), "32".into()],
            cells: vec![
                vec![ok(4.0), HeatCell { value: f64::NAN, infeasible: Some("does not fit <L0A>".into()) }],
                vec![ok(2.0)],
            ],
            minimize: true,
            selected: Some((0, 1)),
            ..Default::default()
        }
    }

    #[test]
    fn cells_carry_ids_reasons_and_selection() {
        let s = to_svg_string(&grid());
        assert!(s.contains("data-cell=\"1,0\"") && s.contains("infeasible — does not fit &lt;L0A&gt;"));
        assert!(s.contains("baseM=32, baseN=32: not evaluated"));
        assert!(s.contains("tl-cell tl-cell-selected\"") && s.contains("data-cell=\"0,1\" class=\"tl-cell tl-cell-selected"));
        assert!(s.contains("role=\"group\"") && s.contains("infeasible (1)"));
    }

    #[test]
    fn survives_empty_and_uniform() {
        assert!(to_svg_string(&HeatmapData::default()).contains("No grid to show"));
        let mut g = grid();
        g.cells = vec![vec![HeatCell { value: 3.0, infeasible: None }; 2]; 2];
        assert!(!to_svg_string(&g).contains("\"NaN"));
    }

    #[test]
    fn parses_cell_ids() {
        assert_eq!(parse_cell("3,4"), Some((3, 4)));
        assert_eq!(parse_cell("3"), None);
        assert_eq!(parse_cell("a,1"), None);
    }
}
