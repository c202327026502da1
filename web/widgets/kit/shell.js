// The widget shell most widgets share: a panel with the fields, the notice line and a grid of result cells, then
// what is the widget's own (its chart, tables, notes). Markup only; the edit -> update -> save cycle around it is
// TallyWidget's (kit/element.js: updateOnEdit, firstUpdate, showFieldErrors, callEngine, observeChartWidth).
import { baseCss } from './styles.js';

/**
 * One result cell: `label` (markup) over the value slot [data-out="<out>"], which starts as "—"; `labelOut` names
 * the label's own slot where the widget rewrites it, `className` is added to "result".
 */
export function resultCell({ out, label, labelOut, className }) {
  const labelSlot = labelOut ? ` data-out="${labelOut}"` : '';
  return `<div class="result${className ? ` ${className}` : ''}"><div class="label"${labelSlot}>${label}</div><div class="value" data-out="${out}">—</div></div>`;
}

/**
 * The panel's markup: the shared styles and the widget's `css`, a group named `label` holding the `fields` markup,
 * `between` (markup after the fields, a folded group of settings), the notice line, `afterNotice` (a second
 * status line), the `results` cells
 * ([{out, label, labelOut?, className?}], see resultCell) and `body`, the widget's own markup below them.
 */
export function panelHtml({ css, label, fields, between = '', afterNotice = '', results, body }) {
  return `<style>${baseCss}${css}</style>
      <div class="widget" role="group" aria-label="${label}">
        <div class="fields">
          ${fields}
        </div>${between}
        <p class="notice" role="status"></p>${afterNotice}
        <div class="results" aria-live="polite">
          ${results.map(resultCell).join('\n          ')}
        </div>
        ${body}
      </div>`;
}
