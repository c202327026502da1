// Field builders (number, select, checkbox), reading typed numbers, and the error line beside each field.
import { TallyError } from '../../engine.js';
import { isNumberText } from '../../state.js';
import { escapeHtml, formatParams } from './format.js';

/** A labelled input with an error line beside it; `name` is the engine argument it feeds (`inputmode` text for text). */
export function numberField({ name, label, value = '', help = '', inputmode = 'decimal' }) {
  const id = `f-${name}`;
  return `<div class="field" part="field" data-field="${escapeHtml(name)}">
    <label part="label" for="${id}">${escapeHtml(label)}</label>
    <input part="control" id="${id}" name="${escapeHtml(name)}" inputmode="${inputmode}" autocomplete="off" value="${escapeHtml(value)}"
      aria-describedby="${id}-error"${help ? ` title="${escapeHtml(help)}"` : ''}>
    <span class="error" part="error" id="${id}-error" role="alert"></span>
  </div>`;
}

/** Multipliers of the count suffixes a reader may type: "70B", "15T", "8k" (decimal, as in "a 70B model"). */
const SUFFIXES = { k: 1e3, m: 1e6, b: 1e9, t: 1e12 };
const NUMBER_PATTERN = /^([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*([kKmMbBtT%]?)$/;

/** Text a reader is still typing ("", "-", "0.", "1e", "1e-", "1,0"): not yet a number, so not yet an error. */
export function isIncompleteNumber(text) {
  const t = String(text ?? '').trim();
  return (
    /^[-+]?$/.test(t) ||
    /^[-+]?[\d,]*\.$/.test(t) ||
    /^[-+]?[\d,]*\.?\d*[eE][-+]?$/.test(t) ||
    /^[-+]?\d{1,3}(,\d{3})*,\d{0,2}$/.test(t)
  );
}

/**
 * Reads a numeric text field: "70e9", "70B", "1,024", "0.4", and "40%" where the field is a fraction
 * (`percent: true`). Empty and unreadable text throw TallyError(field) naming the field and, when given,
 * its allowed `range` (text such as "(0, 1]"); the engine checks the range itself and names it too.
 */
export function parseNumber(text, field, label = field, { percent = false, range = '' } = {}) {
  const trimmed = String(text ?? '').trim();
  const inRange = range ? ` in ${range}` : '';
  const examples = percent ? '0.4 or 40%' : '70e9, 70B or 0.5';
  if (trimmed === '') throw new TallyError(field, `${label} is empty: enter a number${inRange}`);
  const match = NUMBER_PATTERN.exec(trimmed);
  const suffix = match?.[2] ?? '';
  if (!match || !/\d/.test(match[1]) || (suffix === '%' && !percent))
    throw new TallyError(field, `${label} must be a number${inRange} (like ${examples}), got "${trimmed}"`);
  let value = Number(match[1].replace(/,/g, ''));
  if (suffix === '%') value /= 100;
  else if (suffix) value *= SUFFIXES[suffix.toLowerCase()];
  if (!Number.isFinite(value)) throw new TallyError(field, `${label} is too large${inRange}`);
  return value;
}

/**
 * Reads every field of a widget's `fields` list ({name, label, percent?, range?}) from `values`, collecting
 * every unreadable one, so that each bad field gets its own message at once: {numbers: {name: value}, errors}.
 */
export function parseNumberFields(fields, values) {
  const numbers = {};
  const errors = [];
  for (const f of fields) {
    try {
      numbers[f.name] = parseNumber(values[f.name], f.name, f.label, f);
    } catch (error) {
      errors.push(error);
    }
  }
  return { numbers, errors };
}

/** How long an error waits while the reader is typing in its field ("0" on the way to "0.4" is not a mistake). */
export const TYPING_ERROR_DELAY_MS = 700;

/**
 * Shows `message` beside the field named `field` (or in the widget's notice line). While the reader is
 * typing in that very field, the message waits until they pause (or, for text that is still an unfinished
 * number such as "0." or "1e", until they leave the field), so intermediate states never flash an error.
 */
export function showError(root, field, message) {
  const host = root.host;
  const input = root.querySelector(
    `.field[data-field="${CSS.escape(field)}"] input, .field[data-field="${CSS.escape(field)}"] textarea`,
  );
  if (typeof host?.holdError === 'function' && input && host.typingField === field) {
    host.holdError(field, message, isIncompleteNumber(input.value) ? null : TYPING_ERROR_DELAY_MS);
    return;
  }
  showErrorNow(root, field, message);
}

/** Shows `message` beside `field` (or in the notice line) at once, without waiting for the reader to pause. */
export function showErrorNow(root, field, message) {
  const box = root.querySelector(`.field[data-field="${CSS.escape(field)}"]`);
  if (box) {
    box.querySelector('.error').textContent = message;
    box.querySelector('input, select, textarea')?.setAttribute('aria-invalid', 'true');
  } else {
    const notice = root.querySelector('.notice');
    if (notice) notice.textContent = message;
  }
}

export function clearErrors(root) {
  root.host?.dropHeldErrors?.(); // a TallyWidget's held errors (kit/element.js)
  for (const el of root.querySelectorAll('.field .error')) el.textContent = '';
  for (const el of root.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  const notice = root.querySelector('.notice');
  if (notice) notice.textContent = '';
}

/** Option labels longer than this (about 130 px of 15 px text) make their select span two grid columns. */
const WIDE_OPTION_CHARS = 16;

/** A labelled <select>; options are [{value, label, title?}]. */
export function selectField({ name, label, options, value = '' }) {
  const id = `f-${name}`;
  const opts = options.map(
    (o) =>
      `<option value="${escapeHtml(o.value)}"${String(o.value) === String(value) ? ' selected' : ''}${o.title ? ` title="${escapeHtml(o.title)}"` : ''}>${escapeHtml(o.label)}</option>`,
  );
  // A select cannot wrap its text: one whose longest option would be cut off in one grid column takes two.
  const wide = Math.max(0, ...options.map((o) => String(o.label).length)) > WIDE_OPTION_CHARS;
  return `<div class="field${wide ? ' wide' : ''}" part="field" data-field="${escapeHtml(name)}">
    <label part="label" for="${id}">${escapeHtml(label)}</label>
    <select part="control" id="${id}" name="${escapeHtml(name)}" aria-describedby="${id}-error">${opts.join('')}</select>
    <span class="error" part="error" id="${id}-error" role="alert"></span>
  </div>`;
}

/** A labelled checkbox (`help`: its tooltip). */
export function checkboxField({ name, label, checked = false, help = '' }) {
  const id = `f-${name}`;
  return `<div class="field check" part="field" data-field="${escapeHtml(name)}"${help ? ` title="${escapeHtml(help)}"` : ''}>
    <input part="control checkbox" type="checkbox" id="${id}" name="${escapeHtml(name)}"${checked ? ' checked' : ''} aria-describedby="${id}-error">
    <label part="label" for="${id}">${escapeHtml(label)}</label>
    <span class="error" part="error" id="${id}-error" role="alert"></span>
  </div>`;
}

/** Declared-state entries (declareState) for number fields [{name, attribute?, fallback}], each read as number text. */
export function numberStateFields(fields) {
  return fields.map((f) => ({ name: f.name, attribute: f.attribute, check: isNumberText, fallback: f.fallback }));
}

/** A model preset as a select option: its name and parameter count. */
export function modelOption(model) {
  return { value: model.id, label: `${model.name} (${formatParams(model.params_total)})` };
}
