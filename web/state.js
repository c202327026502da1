// URL state shared by every widget on a page, so a link reproduces exactly what the reader saw.
//
// Each widget owns the query parameters "<key>.<field>", e.g. ?mem1.model=llama-3-8b&mem1.gpus=8. The key
// is the element's id when it has a simple one, else a short tag name plus its position on the page
// ("mem1" is the first <tally-memory-budget>). Values are plain text; a widget says which values it accepts
// (a validator per field), and anything else is ignored and reported as a notice, never put into the page
// as HTML. Parameters that do not look like "<key>.<field>" belong to the host page and are left alone.

const KEY_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;
const PARAM_PATTERN = /^([a-z][a-z0-9-]{0,31})\.([a-z_]{1,32})$/;
/** Longest value accepted from the URL (a pasted config.json is the longest legitimate one). */
export const MAX_VALUE_LENGTH = 20000;

const initial = new URLSearchParams(globalThis.location?.search ?? '');
const owners = new Map();   // key -> element
const current = new Map();  // key -> Map(field -> text)
const listeners = new Set();
let writeTimer = 0;

/** The state key of a widget element; `short` is its tag's abbreviation ("mem", "cmp"). */
export function stateKey(element, short) {
  if (element.id && KEY_PATTERN.test(element.id)) return element.id;
  const same = [...document.querySelectorAll(element.localName)];
  return `${short}${same.indexOf(element) + 1}`;
}

/**
 * Reads the widget's fields from the URL. `schema` maps field -> validator(text) returning true or a reason
 * string. Returns { values: {field: text}, rejected: [{param, reason}] }; rejected values are not applied.
 */
export function readState(key, schema) {
  owners.set(key, true);
  const values = {};
  const rejected = [];
  for (const [param, text] of initial) {
    const match = PARAM_PATTERN.exec(param);
    if (!match || match[1] !== key) continue;
    const field = match[2];
    if (!Object.hasOwn(schema, field)) { rejected.push({ param, reason: 'this widget has no such setting' }); continue; }
    if (text.length > MAX_VALUE_LENGTH) { rejected.push({ param, reason: `longer than ${MAX_VALUE_LENGTH} characters` }); continue; }
    const verdict = schema[field](text);
    if (verdict === true) values[field] = text;
    else rejected.push({ param, reason: typeof verdict === 'string' ? verdict : 'not an accepted value' });
  }
  return { values, rejected };
}

/** Records a widget's current settings; the URL is rewritten shortly after the last change. */
export function writeState(key, values) {
  current.set(key, new Map(Object.entries(values).map(([k, v]) => [k, String(v)])));
  clearTimeout(writeTimer);
  writeTimer = setTimeout(flush, 200);
}

function flush() {
  if (!globalThis.history?.replaceState) return;
  const params = new URLSearchParams(location.search);
  for (const [key, fields] of current) {
    for (const param of [...params.keys()]) if (PARAM_PATTERN.exec(param)?.[1] === key) params.delete(param);
    for (const [field, text] of fields) params.set(`${key}.${field}`, text);
  }
  const query = params.toString();
  history.replaceState(history.state, '', `${location.pathname}${query ? `?${query}` : ''}${location.hash}`);
  for (const listener of listeners) listener();
}

/** Writes any pending change to the URL now (tests and "copy link" use it). */
export function flushState() {
  clearTimeout(writeTimer);
  flush();
}

/** Calls `listener` after every URL update. */
export function onStateWritten(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** URL parameters shaped like widget state whose key no widget on the page claimed. */
export function unclaimedParams() {
  return [...initial.keys()].filter((param) => {
    const match = PARAM_PATTERN.exec(param);
    return match && !owners.has(match[1]);
  });
}

// Validators for readState schemas.

/** A number as a reader types it ("70e9", "0.5", "70B", "1,024", "40%"); range checks are the engine's. */
export function isNumberText(text) {
  return (text.length <= 32 && /^[-+]?(\d{1,3}(,\d{3})+|\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*[kKmMbBtT%]?$/.test(text)) || 'not a number';
}

/** One of a fixed set of values. */
export function oneOf(allowed) {
  const set = new Set(allowed);
  return (text) => set.has(text) || `not one of ${[...set].slice(0, 8).join(', ')}${set.size > 8 ? ', …' : ''}`;
}

export function isBoolText(text) {
  return text === 'true' || text === 'false' || 'must be true or false';
}
