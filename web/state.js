// URL state shared by every widget on a page, so a link reproduces exactly what the reader saw.
//
// Each widget owns the query parameters "<key>.<field>", e.g. ?mem1.model=llama-3-8b&mem1.gpus=8. The key
// is the element's id when it has a simple one, else a short tag name plus its position on the page
// ("mem1" is the first <tally-memory-budget>). Values are plain text; a widget says which values it accepts
// (a validator per field), and anything else is ignored and reported as a notice, never put into the page
// as HTML. Parameters that do not look like "<key>.<field>" belong to the host page and are left alone.

const KEY_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;
/** Whether an element id can be a widget's URL key (otherwise the key is the widget's short name and position). */
export const isKeyId = (id) => KEY_PATTERN.test(id);
const PARAM_PATTERN = /^([a-z][a-z0-9-]{0,31})\.([a-z_][a-z0-9_]{0,31})$/;
/**
 * Longest page URL the widgets write: common servers refuse longer request lines with 414 or 431 (nginx's
 * default buffer is 8 KiB, Apache's LimitRequestLine 8190 bytes), and a link that does not load is a dead page.
 */
export const MAX_URL_LENGTH = 8000;
/** Longest value accepted from the URL (a pasted config.json is the longest legitimate one). */
export const MAX_VALUE_LENGTH = MAX_URL_LENGTH;

const initial = new URLSearchParams(globalThis.location?.search ?? '');
const owners = new Map(); // key -> element
const current = new Map(); // key -> Map(field -> text)
const listeners = new Set();
const refusalListeners = new Map(); // key -> callback(message or null)
const keyOwners = new Map(); // key -> the element it was handed to
let writeTimer = 0;

/**
 * The state key of a widget element; `short` is its tag's abbreviation ("mem", "cmp"). Keys are unique on the
 * page: a second widget with the same id (or whose position key is someone's id) warns and gets "<key>-2".
 */
export function stateKey(element, short) {
  for (const [key, owner] of keyOwners) if (owner === element) return key;
  let key;
  if (element.id && KEY_PATTERN.test(element.id)) {
    key = element.id;
    if (keyOwners.has(key))
      console.warn(
        `tally: two widgets have id="${key}"; this <${element.localName}> keeps its URL state under a different key. Give each widget its own id.`,
      );
  } else {
    const same = [...document.querySelectorAll(element.localName)];
    key = `${short}${same.indexOf(element) + 1}`;
  }
  const base = key;
  for (let n = 2; keyOwners.has(key); n++) key = `${base.slice(0, 28)}-${n}`;
  keyOwners.set(key, element);
  return key;
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
    if (!Object.hasOwn(schema, field)) {
      rejected.push({ param, field, reason: 'this widget has no such setting' });
      continue;
    }
    if (text.length > MAX_VALUE_LENGTH) {
      rejected.push({ param, field, reason: `longer than ${MAX_VALUE_LENGTH} characters` });
      continue;
    }
    const verdict = schema[field](text);
    if (verdict === true) values[field] = text;
    else rejected.push({ param, field, reason: typeof verdict === 'string' ? verdict : 'not an accepted value' });
  }
  return { values, rejected };
}

/**
 * Records a widget's current settings; the URL is rewritten shortly after the last change. Settings that
 * would make the page's URL longer than MAX_URL_LENGTH are not recorded (the URL keeps the last state that
 * fit) and the widget's onStateRefused listener is told why. Returns true when recorded.
 */
export function writeState(key, values) {
  const fields = new Map(Object.entries(values).map(([k, v]) => [k, String(v)]));
  const length = urlFor(new Map([...current, [key, fields]])).length;
  if (length > MAX_URL_LENGTH) {
    refusalListeners.get(key)?.(
      `This state is too long to keep in the page's link (${length.toLocaleString('en-US')} characters; servers refuse links over ${MAX_URL_LENGTH.toLocaleString('en-US')}), so the link keeps the last state that fit.`,
    );
    return false;
  }
  refusalListeners.get(key)?.(null);
  current.set(key, fields);
  clearTimeout(writeTimer);
  writeTimer = setTimeout(flush, 200);
  return true;
}

/** The page URL (path, query, hash) holding `state` (key -> Map(field -> text)) and the host's own parameters. */
function urlFor(state) {
  const params = new URLSearchParams(globalThis.location?.search ?? '');
  for (const [key, fields] of state) {
    for (const param of [...params.keys()]) if (PARAM_PATTERN.exec(param)?.[1] === key) params.delete(param);
    for (const [field, text] of fields) params.set(`${key}.${field}`, text);
  }
  const query = params.toString();
  const origin = globalThis.location?.origin ?? '';
  return `${origin}${globalThis.location?.pathname ?? '/'}${query ? `?${query}` : ''}${globalThis.location?.hash ?? ''}`;
}

function flush() {
  writeTimer = 0;
  if (!globalThis.history?.replaceState) return;
  history.replaceState(history.state, '', urlFor(current).slice(location.origin.length));
  for (const listener of listeners) listener();
}

// A reader who changes a setting and leaves within the write delay keeps it: the history entry gets the URL first.
globalThis.addEventListener?.('pagehide', () => {
  if (writeTimer) flushState();
});

/** Calls `listener(message)` when `key`'s state is refused as too long, and `listener(null)` once it fits again. */
export function onStateRefused(key, listener) {
  refusalListeners.set(key, listener);
  return () => refusalListeners.delete(key);
}

/** Writes any pending change to the URL now (tests and the Share / embed control use it). */
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
  return (
    (text.length <= 32 && /^[-+]?(\d{1,3}(,\d{3})+|\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*[kKmMbBtT%]?$/.test(text)) ||
    'not a number'
  );
}

/** One of a fixed set of values. */
export function oneOf(allowed) {
  const set = new Set(allowed);
  const check = (text) => set.has(text) || `not one of ${[...set].slice(0, 8).join(', ')}${set.size > 8 ? ', …' : ''}`;
  check.allowed = [...set]; // so tests can try every value a field accepts (tests/browser/url-state.test.mjs)
  return check;
}

export function isBoolText(text) {
  return text === 'true' || text === 'false' || 'must be true or false';
}
isBoolText.allowed = ['true', 'false'];
isNumberText.kind = 'number';
