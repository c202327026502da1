// A widget's state in the page URL: the key it claims, the values it reads at start, how they are reconciled
// with what the engine accepted after the first update, the notice line naming each URL value that does not
// show, and the write-back after each edit. web/state.js holds the page's query itself (keys, parsing, writing);
// this module is what one widget does with it. TallyWidget (kit/element.js) is its only caller.
//
// The widget it is given provides: `key` (set by claimUrlKey), `stateSchema` ({field: check}), `defaults` (the
// starting texts), values(), applyState(values), update(), `lastError` ({field, message} or null), revertField(field),
// urlOverrideReason(field, state), `shadowRoot`, getAttribute(). It writes onto the widget: `urlValues` (the URL's
// accepted texts), `urlFields` (the fields whose URL value still shows), `urlRejections` and `urlNotices`.
import { readState, writeState, stateKey, isKeyId, onStateRefused } from '../../state.js';

/** Longest value text quoted back in a notice or an error. */
export const QUOTE_CHARS = 40;

/** An engine error's message for a URL notice; an overflow's "nan" or "inf" is said in words instead. */
function plainMessage(error) {
  return /\b(nan|inf|infinity)\b/i.test(error.message) ? 'the result is not a finite number' : error.message;
}

/** "the engine refused tokens: …", for a URL value that made the engine refuse another field. */
function refusal(error) {
  return `the engine refused ${error.field || 'the input'}: ${plainMessage(error)}`;
}

/** Whether a state text shows the URL's text (a missing field reads as empty; a textarea turns CR LF into LF). */
function sameStateText(shown, given) {
  const norm = (text) => String(text ?? '').replace(/\r\n?/g, '\n');
  return norm(shown) === norm(given);
}

/** Gives `widget` its URL key (web/state.js stateKey; `short` is its tag's abbreviation) unless it has one. */
export function claimUrlKey(widget, short) {
  widget.key ??= stateKey(widget, short);
  return widget.key;
}

/**
 * Claims an id'd widget's key at once: widgets mount out of document order (those in view first), so of two with
 * the same id the first on the page keeps it (id-less keys count positions, which order does not change).
 */
export function claimIdKey(widget) {
  if (widget.id && isKeyId(widget.id)) claimUrlKey(widget, '');
}

/**
 * Whether `widget` reads and writes the page URL. A host page's URL belongs to its author, so it is off unless
 * the element has `url-state` (not "false"/"off") or the page has <meta name="tally-url-state" content="on">
 * (tally's own index.html and embed.html do).
 */
export function keepsUrlState(widget) {
  const own = widget.getAttribute('url-state')?.trim().toLowerCase();
  if (own !== undefined) return ['', 'on', 'true'].includes(own); // anything else is refused (hostAttributeNotices)
  return document.querySelector('meta[name="tally-url-state"]')?.getAttribute('content')?.trim() === 'on';
}

/**
 * The URL's values for the widget's fields ({field: text}, each passing its check), where URL state is on.
 * Values that fail their check wait in `urlRejections` for settleUrlState().
 */
export function readUrlState(widget) {
  const fromUrl = keepsUrlState(widget) ? readState(widget.key, widget.stateSchema) : { values: {}, rejected: [] };
  widget.urlValues = { ...fromUrl.values };
  widget.urlFields = new Set(Object.keys(fromUrl.values));
  widget.urlRejections = [...fromUrl.rejected];
  return fromUrl.values;
}

/** Writes the widget's state to the URL (after each reader edit), where URL state is on. */
export function saveUrlState(widget) {
  if (keepsUrlState(widget)) writeState(widget.key, widget.values());
}

/** Shows web/state.js's refusals to write the widget's link (too long a URL) in its notice line. */
export function watchUrlRefusals(widget) {
  if (widget.key) widget.stopRefusals = onStateRefused(widget.key, (message) => setUrlNotice(widget, ':link', message));
}

/**
 * After the first update(): every URL value either shows in the state or gets a notice naming its parameter.
 * Values the engine refused go back to their starting value, and so do values that made it refuse another
 * field (blameUrlFields); values another setting overrode stay overridden, with the reason.
 */
export function settleUrlState(widget) {
  const rejected = widget.urlRejections ?? [];
  widget.urlFields ??= new Set();
  const reject = (field, reason) => {
    widget.urlFields.delete(field);
    rejected.push({ param: `${widget.key}.${field}`, field, reason });
  };
  // A URL value equal to its starting value cannot be what the engine refuses: blameUrlFields looks further.
  const fromUrl = (field) =>
    widget.urlFields.has(field) && !sameStateText(widget.urlValues[field], widget.defaults[field]);
  while (widget.lastError && fromUrl(widget.lastError.field)) {
    const field = widget.lastError.field;
    reject(field, plainMessage(widget.lastError));
    widget.revertField(field);
    widget.update();
  }
  if (widget.lastError && widget.urlFields.size) blameUrlFields(widget, reject);
  const state = widget.values();
  for (const field of [...widget.urlFields])
    if (!sameStateText(state[field], widget.urlValues[field])) reject(field, widget.urlOverrideReason(field, state));
  showUrlRejections(widget, rejected);
  widget.urlRejections = [];
}

/**
 * The engine blamed a field the URL did not set (an overflow it traces to `tokens` when `params` was huge): a URL
 * value whose revert clears or changes the error goes back, one at a time until none is left to blame; if no
 * single one does but reverting them all clears it, all go back; otherwise the URL is not the cause and stays.
 */
function blameUrlFields(widget, reject) {
  const same = (a, b) => a && b && a.field === b.field && a.message === b.message;
  search: while (widget.lastError && widget.urlFields.size) {
    const error = widget.lastError;
    for (const field of widget.urlFields) {
      const before = widget.values();
      widget.revertField(field);
      widget.update();
      if (!same(widget.lastError, error)) {
        reject(field, `with it, ${refusal(error)}`);
        continue search;
      }
      widget.applyState(before);
      widget.update();
    }
    const before = widget.values();
    const fields = [...widget.urlFields];
    for (const field of fields) widget.revertField(field);
    widget.update();
    if (!widget.lastError) fields.forEach((field) => reject(field, `with the other URL settings, ${refusal(error)}`));
    else {
      widget.applyState(before);
      widget.update();
    }
    return;
  }
}

/** Why a URL value another setting replaced does not show (widgets with linked fields say which setting). */
export function overrideReason(field, state) {
  return state[field] === undefined
    ? 'another setting of this link replaces it'
    : `another setting of this link replaces it with "${String(state[field]).slice(0, QUOTE_CHARS)}"`;
}

/**
 * Shows the URL values the widget ignored ([{param, field, reason}] from readState, or engine rejections).
 * Each line stays until the reader changes that field; clearErrors() does not touch them.
 */
export function showUrlRejections(widget, rejected) {
  for (const r of rejected) setUrlNotice(widget, r.field ?? r.param, `${r.param} (${r.reason})`, true);
}

/**
 * Sets (or with `text` null, removes) the notice for `field` in the widget's URL notice line; a `rejection` (a URL
 * value that does not show) is listed under "Ignored URL settings" and settles when the reader edits that field.
 */
export function setUrlNotice(widget, field, text, rejection = false) {
  widget.urlNotices ??= new Map();
  if (text === null && !widget.urlNotices.has(field)) return;
  if (text === null) widget.urlNotices.delete(field);
  else widget.urlNotices.set(field, { text, rejection });
  const root = widget.shadowRoot;
  let box = root.querySelector('.url-notice');
  if (!box) {
    box = document.createElement('p');
    box.className = 'url-notice';
    box.setAttribute('role', 'status');
    const anchor = root.querySelector('.notice') ?? root.querySelector('.fields');
    if (anchor) anchor.before(box);
    else (root.querySelector('.widget') ?? root).append(box);
    // Changing a field the URL set wrongly settles that notice.
    const settle = (event) => {
      const name = event.target?.name;
      if (name && widget.urlNotices.get(name)?.rejection) setUrlNotice(widget, name, null);
    };
    root.addEventListener('input', settle);
    root.addEventListener('change', settle);
  }
  const rejections = [...widget.urlNotices.values()].filter((n) => n.rejection).map((n) => n.text);
  const others = [...widget.urlNotices.values()].filter((n) => !n.rejection).map((n) => n.text);
  box.textContent = [rejections.length ? `Ignored URL settings: ${rejections.join('; ')}.` : '', ...others]
    .filter(Boolean)
    .join(' ');
}
