// The styles every widget shares (light and dark palettes, fields, results, compact mode), and darkCss() for
// a widget's own dark rules. Hosts restyle through --tally-* properties and ::part() (docs/EMBEDDING.md).

/** The dark palette (docs/EMBEDDING.md lists it) for `selector`: a host's dark theme, or the OS's without one. */
function darkRule(selector) {
  return `${selector} { color-scheme: dark; --fg: var(--tally-fg, #e6edf3); --muted: var(--tally-muted, #9da7b3); --bg: var(--tally-bg, #0d1117);
    --panel: var(--tally-panel, #161b22); --border: var(--tally-border, #30363d); --accent: var(--tally-accent, #58a6ff);
    --error: var(--tally-error, #ff7b72); --ok: var(--tally-ok, #3fb950); --warn: var(--tally-warn, #e3b341); }`;
}

/**
 * Styles every widget shares; light or dark follows the `theme` attribute, else the host page, else the OS (hostTheme). A host page restyles the
 * widgets with the documented --tally-* custom properties (docs/EMBEDDING.md) and ::part() names, never by
 * reaching into the shadow DOM; the short names (--fg, …) are internal.
 */
export const baseCss = `
:host([data-tally-theme="light"]) { color-scheme: light; }
:host { display: block; font: var(--tally-font-size, 15px)/1.5 var(--tally-font, system-ui, -apple-system, "Segoe UI", sans-serif);
  --fg: var(--tally-fg, #1b1f24); --muted: var(--tally-muted, #57606a); --bg: var(--tally-bg, #ffffff);
  --panel: var(--tally-panel, #f6f8fa); --border: var(--tally-border, #d0d7de); --accent: var(--tally-accent, #0b63ce);
  --error: var(--tally-error, #b3261e); --ok: var(--tally-ok, #1a7f37); --warn: var(--tally-warn, #8a4b00); color: var(--fg);
  /* text settings a host inherits into the shadow tree (reveal.js centres slides) */
  text-align: start; text-transform: none; letter-spacing: normal; word-spacing: normal; white-space: normal; }
${darkRule(':host([data-tally-theme="dark"])')}
@media (prefers-color-scheme: dark) { ${darkRule(':host(:not([data-tally-theme]))')} }
.widget { background: var(--panel); border: 1px solid var(--border); border-radius: var(--tally-radius, 8px); padding: 12px 14px; }
.warnings { color: var(--warn); font-size: 13px; margin: 6px 0 0; padding: 0 0 0 1.2em; }
.warnings:empty { display: none; }
.fields { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(170px, 40%), 1fr)); gap: 10px 14px; }
.field.wide { grid-column: span 2; }
.field { display: flex; flex-direction: column; gap: 2px; min-width: 0; }
.field label { font-size: 13px; color: var(--muted); }
.field input, .field select { font: inherit; padding: 4px 6px; border: 1px solid var(--border); border-radius: 4px;
  background: var(--bg); color: var(--fg); min-width: 0; }
.field input[aria-invalid="true"] { border-color: var(--error); outline-color: var(--error); }
.field .error { color: var(--error); font-size: 13px; min-height: 0; }
.results { margin-top: 12px; display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 8px 14px; }
.result .label { font-size: 13px; color: var(--muted); }
.result .value { font-size: 20px; font-variant-numeric: tabular-nums; }
.notice, .url-notice { color: var(--error); font-size: 13px; }
.url-notice:empty, .defaults-note:empty { display: none; }
.defaults-note { color: var(--muted); font-size: 13px; margin: 6px 0 0; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
.field.check { flex-direction: row; align-items: center; gap: 6px; padding-top: 18px; }
.field.check label { font-size: 14px; color: var(--fg); }
.field.check input { flex-shrink: 0; } /* a long label wraps; the box keeps its size */
.field textarea { font: 12px/1.4 ui-monospace, monospace; width: 100%; min-height: 90px; padding: 4px 6px;
  border: 1px solid var(--border); border-radius: 4px; background: var(--bg); color: var(--fg); }
.toolbar { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 10px; align-items: center; }
button { font: 13px system-ui, sans-serif; padding: 4px 10px; border-radius: 4px; border: 1px solid var(--border);
  background: var(--bg); color: var(--fg); cursor: pointer; min-height: 30px; }
button:hover { border-color: var(--accent); }
.status { font-size: 13px; color: var(--muted); }
svg text { fill: var(--fg); font: 12px system-ui, sans-serif; }
svg .axis line, svg .axis path { stroke: var(--muted); }
svg .grid line { stroke: var(--border); }
/* compact: a slide (960x700) holds the widget; the box scrolls inside past that height and explanations step aside. */
:host([compact]) { font-size: var(--tally-font-size, 13px); }
:host([compact]) .widget { max-height: var(--tally-compact-height, 660px); overflow: auto; padding: 8px 10px; box-sizing: border-box; }
:host([compact]) .fields { grid-template-columns: repeat(auto-fill, minmax(min(120px, 40%), 1fr)); gap: 4px 10px; }
:host([compact]) .note, :host([compact]) details.share { display: none; }
:host([compact]) svg.chart, :host([compact]) svg.timeline { max-height: 240px; }
:host([compact]) .result .value { font-size: 17px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
/* Forced colours (Windows contrast themes) replace backgrounds with the system's, which would blank every legend
   swatch while the marks they name keep no label: the colours that key a chart (legend swatches, the memory bar's
   and the step timeline's segments, a float's bit fields) keep the widget's own, each swatch outlined in the
   system's text colour. Text stays in the system's colours. */
@media (forced-colors: active) {
  .swatch, .sw, .legend span::before, svg rect.seg, .bit { forced-color-adjust: none; }
  .swatch, .sw, .legend span::before { outline: 1px solid CanvasText; }
}
`;

/**
 * `rules` (plain `selector { ... }` rules) for the dark theme: under a dark `data-tally-theme`, or under the OS's
 * dark setting before the widget has resolved its theme.
 */
export function darkCss(rules) {
  const under = (host) =>
    rules.replace(
      /([^{}]+)\{/g,
      (_, selectors) =>
        `${selectors
          .split(',')
          .map((sel) => `${host} ${sel.trim()}`)
          .join(', ')} {`,
    );
  return `${under(':host([data-tally-theme="dark"])')}\n@media (prefers-color-scheme: dark) { ${under(':host(:not([data-tally-theme]))')} }`;
}
