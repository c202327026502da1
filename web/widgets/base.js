// The widget kit in one import: every widget (and a host script) imports from here; each concern lives in its
// own module under kit/: element.js (TallyWidget, defineWidget), store.js (a widget's field table), url-state.js
// (its state in the page URL), styles.js, theme.js, format.js (display formatting), fields.js (field builders, number
// reading, error lines), export.js (copy, download, SVG/PNG), mount.js (when widgets mount), chart.js (chart scales
// and ticks), share.js (the Share / embed control). Widgets compute nothing: numbers come from the engine.
export { getEngine, TallyError } from '../engine.js';
export { readState, writeState, stateKey, isNumberText, isBoolText, oneOf } from '../state.js';
export { baseCss, darkCss } from './kit/styles.js';
export { THEMES, hostTheme } from './kit/theme.js';
export {
  escapeHtml,
  SECONDS_PER_DAY,
  SECONDS_PER_HOUR,
  GB,
  formatNumber,
  formatBytes,
  formatParams,
  formatDollars,
  formatSi,
  formatPercent,
  formatFormula,
  formulaSymbols,
  formulaHtml,
  symbolLegend,
} from './kit/format.js';
export {
  numberField,
  selectField,
  checkboxField,
  isIncompleteNumber,
  parseNumber,
  parseNumberFields,
  TYPING_ERROR_DELAY_MS,
  showError,
  clearErrors,
  numberStateFields,
  modelOption,
} from './kit/fields.js';
export { copyText, downloadBlob, standaloneSvg, svgToPng } from './kit/export.js';
export { declaredArgs, declaredValues, declaredField, literalDefault } from './kit/contract.js';
export { TallyWidget, ElementBase, defineWidget, widgetTags } from './kit/element.js';
export { fieldControl, fieldAttribute, fieldArgs, presetSelect, readFields, writeFields } from './kit/store.js';
